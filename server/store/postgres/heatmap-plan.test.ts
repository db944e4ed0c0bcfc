import { describe, expect, it } from 'vitest';
import { planReader } from '../../../test-support/store/postgres-plan.js';
import { POSTGRES_DIALECT, Values } from '../reports/dialect.js';
import { heatmapClicksSql, heatmapScrollSql } from '../reports/report-heatmap.js';

/*
 * The heatmap report's cost on PostgreSQL is one page's clicks and scroll depths: both statements
 * can be answered through `events_by_heatmap`, whose condition the planner proves from the
 * statements' constant event types (a parameter would not do).
 */

describe('the heatmap report on PostgreSQL', () => {
  it('reads the page through events_by_heatmap', async () => {
    const reader = await planReader();
    try {
      const where = (v: Values): string =>
        [`project_id = ${v.add('p')}`, `timestamp >= ${v.add(0)}`, `timestamp < ${v.add(1)}`, 'is_bot = false', `path = ${v.add('/pricing')}`].join(' AND ');
      const c = new Values(POSTGRES_DIALECT);
      const clicks = heatmapClicksSql(POSTGRES_DIALECT, c, where(c), 10);
      const s = new Values(POSTGRES_DIALECT);
      const scroll = heatmapScrollSql(POSTGRES_DIALECT, where(s));
      for (const [sql, values] of [
        [clicks, c.list],
        [scroll, s.list],
      ] as const) {
        const plan = await reader.plan(sql, values);
        // Each partition has its own copy of the index, named for its columns.
        expect(plan).toMatch(/Index Scan using events_\w+_project_id_path_timestamp_idx/);
        expect(plan).not.toMatch(/project_id_timestamp_event_id_idx|event_id_id_day|Seq Scan/);
      }
    } finally {
      await reader.end();
    }
  });
});
