import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, openTestStore } from '../../test-support/server/test-server.js';
import { frustrationFixture } from '../../test-support/store/frustration-fixture.js';
import { newProjectId } from '../../test-support/store/event-store.fixtures.js';
import { frustrationToWire } from './frustration-report.js';
import type { EventStore } from '../store/event-store.js';
import { isPostgresUrl } from '../store/open-store.js';
import { FRUSTRATION_SESSION_IDS, FRUSTRATION_SIGNALS, type FrustrationRow, type FrustrationSignal, type ReportQuery } from '../store/report-store.js';

/*
 * The frustration report on SQLite and PostgreSQL against direct SQL over the same generated rows
 * (read from the database, not through the store): counts and distinct sessions by one GROUP BY,
 * each session's latest signal by another; ranking and the limit per signal in plain code.
 */

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 7, 30);

/** `?` placeholders on both databases. */
type All = (sql: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>;

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe.each(STORE_KINDS)('the frustration report on %s', (kind) => {
  let store: EventStore;
  let dispose: () => Promise<void>;
  let all: All;
  let closeDirect: () => Promise<void>;
  const projectId = newProjectId();

  beforeAll(async () => {
    const opened = await openTestStore(kind);
    store = opened.store;
    dispose = opened.dispose;
    await store.write({ events: frustrationFixture(projectId, T0, 3000, 39), chunks: [] });
    if (isPostgresUrl(opened.location)) {
      const client = new pg.Client({ connectionString: opened.location });
      await client.connect();
      all = async (sql, values) => {
        let n = 0;
        return (await client.query(sql.replace(/\?/g, () => `$${++n}`), values)).rows as Array<Record<string, unknown>>;
      };
      closeDirect = () => client.end();
    } else {
      const db = new Database(opened.location, { readonly: true });
      all = async (sql, values) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      closeDirect = async () => void db.close();
    }
  });
  afterAll(async () => {
    await closeDirect?.();
    await store?.close();
    await dispose?.();
  });

  /** The report as direct SQL gives it. */
  async function direct(q: ReportQuery, limit: number): Promise<FrustrationRow[]> {
    const selector = kind === 'postgres' ? "COALESCE(properties ->> 'selector', '')" : "COALESCE(json_extract(properties, '$.selector'), '')";
    let where = `project_id = ? AND timestamp >= ? AND timestamp < ? AND event_type IN (${FRUSTRATION_SIGNALS.map(() => '?').join(', ')})`;
    const values: unknown[] = [q.projectId, q.from, q.to, ...FRUSTRATION_SIGNALS];
    if (!q.includeBots) where += ' AND NOT is_bot';
    if (q.filters.page !== undefined) {
      where += ' AND path = ?';
      values.push(q.filters.page);
    }
    const groups = await all(
      `SELECT event_type, ${selector} AS selector, COALESCE(path, '') AS page, COUNT(*) AS n, COUNT(DISTINCT session_id) AS sessions
       FROM events WHERE ${where} GROUP BY 1, 2, 3`,
      values,
    );
    const lasts = await all(
      `SELECT event_type, ${selector} AS selector, COALESCE(path, '') AS page, session_id, MAX(timestamp) AS last
       FROM events WHERE ${where} AND session_id IS NOT NULL GROUP BY 1, 2, 3, 4`,
      values,
    );
    const key = (r: Record<string, unknown>) => JSON.stringify([r.event_type, r.selector, r.page]);
    const rows: FrustrationRow[] = groups.map((g) => ({
      signal: String(g.event_type) as FrustrationSignal,
      selector: String(g.selector),
      path: String(g.page),
      count: Number(g.n),
      sessions: Number(g.sessions),
      sessionIds: lasts
        .filter((l) => key(l) === key(g))
        .sort((a, b) => Number(b.last) - Number(a.last) || byBytes(String(a.session_id), String(b.session_id)))
        .slice(0, FRUSTRATION_SESSION_IDS)
        .map((l) => String(l.session_id)),
    }));
    rows.sort((a, b) => byBytes(a.signal, b.signal) || b.count - a.count || byBytes(a.selector, b.selector) || byBytes(a.path, b.path));
    const kept = new Map<string, number>();
    return rows.filter((r) => {
      kept.set(r.signal, (kept.get(r.signal) ?? 0) + 1);
      return kept.get(r.signal)! <= limit;
    });
  }

  it('counts elements, events and sessions per signal as direct SQL does, over ranges, filters and limits', async () => {
    let checked = 0;
    for (const range of [
      { from: T0, to: T0 + DAY },
      { from: T0 + 2 * 3_600_000, to: T0 + 9 * 3_600_000 },
    ]) {
      for (const filters of [{}, { page: '/checkout' }]) {
        for (const includeBots of [false, true]) {
          for (const limit of [2, 100]) {
            const q: ReportQuery = { projectId, ...range, filters, includeBots, visitorKey: 'anonymous' };
            const expected = await direct(q, limit);
            expect(await store.reports.frustration(q, limit), JSON.stringify({ range, filters, includeBots, limit })).toEqual(expected);
            checked += expected.length;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('answers every signal on the wire, an empty list for a signal without events', async () => {
    const q: ReportQuery = { projectId, from: T0, to: T0 + DAY, filters: { page: '/nowhere' }, includeBots: false, visitorKey: 'anonymous' };
    expect(frustrationToWire(q, await store.reports.frustration(q, 10))).toEqual({
      from: new Date(T0).toISOString(),
      to: new Date(T0 + DAY).toISOString(),
      signals: { rage_click: [], dead_click: [], error_click: [] },
    });
    const wide: ReportQuery = { ...q, filters: {} };
    const answer = frustrationToWire(wide, await store.reports.frustration(wide, 1));
    for (const signal of FRUSTRATION_SIGNALS) {
      expect(answer.signals[signal]).toHaveLength(1);
      expect(Object.keys(answer.signals[signal][0]!)).toEqual(['selector', 'page', 'count', 'sessions', 'session_ids']);
    }
  });
});
