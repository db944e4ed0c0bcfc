import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { finerOf, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, SKETCH_COLUMNS } from '../aggregates/aggregate-schema.js';
import { ESTIMATE_COLUMNS } from '../aggregates/kept-estimates.js';
import { estimateSketchBytes, unionSketchBytes } from '../aggregates/visitor-sketch.js';
import type { EventDimensions, StoredEvent } from '../event-store.js';
import { compactPostgresAggregates } from './postgres-aggregates.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * What PostgreSQL's erasure leaves in the aggregates (`postgres-aggregates.ts`, `mergeRowsAgain`):
 * each day and week row it merges again, whether of one part (updated in place, only its changed
 * sketches written) or of several (written again as one), holds exactly the merge of its finer
 * rows; and no estimate kept beside a sketch is of a sketch other than the stored one. That every
 * report stays exact is the contract suites' part (`aggregate.contract.ts`).
 */

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const START = Date.UTC(2026, 0, 5);

/** A page only the erased user viewed. */
const ONLY_THEIRS = '/only-theirs';

type AggRow = { part: string; dim: string; grain: number; bucket: string; value: string; is_bot: boolean; events: string; page_views: string } & Record<string, unknown>;

/** A key's parts merged: counts summed, sketches united (the same code for both sides of a comparison, so equal merges are equal bytes). */
interface Merged {
  events: number;
  pageViews: number;
  sketches: Array<Uint8Array | null>;
}

function mergeInto(merged: Map<string, Merged>, key: string, row: AggRow): void {
  const into = merged.get(key) ?? { events: 0, pageViews: 0, sketches: SKETCH_COLUMNS.map(() => null) };
  into.events += Number(row.events);
  into.pageViews += Number(row.page_views);
  into.sketches = into.sketches.map((sketch, c) => {
    const bytes = row[SKETCH_COLUMNS[c] as string] as Buffer | null;
    return bytes === null ? sketch : unionSketchBytes(sketch, bytes);
  });
  merged.set(key, into);
}

const hex = (bytes: Uint8Array | null | undefined): string | null => (bytes == null ? null : Buffer.from(bytes).toString('hex'));

describe('the PostgreSQL erasure', () => {
  it("merges the user's day and week rows again, of one part or several, to exactly the union of their finer rows, and keeps no stale estimate", async () => {
    const store = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000 });
    await store.init();
    const projectId = newProjectId();
    let partsBefore = new Set<string>();
    try {
      await store.createProject(makeProject(projectId));
      // A busy day (hour rows of registers past the exact range) and a quiet one in the same week.
      const day = START + 2 * 86_400_000;
      const events = [
        ...generateProject({ projectId, start: day, days: 1, sessions: 3_000, seed: 7, idPrefix: 'm' }),
        ...generateProject({ projectId, start: day + 86_400_000, days: 1, sessions: 200, seed: 8, idPrefix: 'q' }),
      ];
      const counts = new Map<string, number>();
      for (const e of events) if (e.userId !== null) counts.set(e.userId, (counts.get(e.userId) ?? 0) + 1);
      const user = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] as string;
      // Another user on the same device and in the same session, once: the rows of that event
      // keep the erased user's visitor and session keys, so some of their sketches do not change.
      const shared = events.find((e) => e.userId === user) as StoredEvent;
      events.push({ ...shared, eventId: 'shared-device-1', userId: 'another-user', timestamp: shared.timestamp + 1 });
      // A page only the user viewed, where another user only clicked, in the same hour: its rows
      // keep an event and a visitor, and their page visitors' sketch becomes empty.
      const view = events.find((e) => e.userId === user && e.eventType === 'page_view') as StoredEvent;
      const click = events.find((e) => e.userId !== user && e.eventType === 'click' && e.sessionId !== null) as StoredEvent;
      events.push({ ...view, eventId: 'only-theirs-1', timestamp: view.timestamp + 2, dimensions: { ...(view.dimensions as EventDimensions), path: ONLY_THEIRS } });
      events.push({ ...click, eventId: 'only-theirs-2', timestamp: view.timestamp + 3, dimensions: { ...(click.dimensions as EventDimensions), path: ONLY_THEIRS } });
      counts.set(user, (counts.get(user) ?? 0) + 1);
      for (let i = 0; i < events.length; i += 5_000) await store.write({ events: events.slice(i, i + 5_000), chunks: [] });
      // Every key one part, as the compaction leaves them; then a few more sessions on the quiet
      // day in small commits, so that its keys, and the week's, have several.
      await compactPostgresAggregates(pool, { values: 0, sessions: 0, sessionDays: 0 });
      const more = [...generateProject({ projectId, start: day + 86_400_000, days: 1, sessions: 40, seed: 9, idPrefix: 'late' })];
      for (let i = 0; i < more.length; i += 20) await store.write({ events: more.slice(i, i + 20), chunks: [] });
      for (const e of more) if (e.userId === user) counts.set(user, (counts.get(user) ?? 0) + 1);
      // The day and week rows of the user's events, of every event and of their pages: both
      // kinds among them, a row of one part and a row of several.
      const theirs = new Set<string>();
      for (const e of [...events, ...more]) {
        if (e.userId !== user || e.isBot) continue;
        const d = Math.floor(e.timestamp / 86_400_000);
        for (const [grain, bucket] of [[GRAIN_DAY, d], [GRAIN_WEEK, Math.floor(d / 7)]] as const) {
          theirs.add(`\u0001${grain}\u0001${bucket}\u0001`);
          if (e.dimensions?.path != null) theirs.add(`page\u0001${grain}\u0001${bucket}\u0001${e.dimensions.path}`);
        }
      }
      const parts = await pool.query<{ key: string; n: string }>(
        `SELECT dim || chr(1) || grain || chr(1) || bucket || chr(1) || value AS key, count(*) AS n FROM agg_values
         WHERE project_id = $1 AND dim IN ('', 'page') AND grain IN (${GRAIN_DAY}, ${GRAIN_WEEK}) AND NOT is_bot GROUP BY 1`,
        [projectId],
      );
      const touched = parts.rows.filter((r) => theirs.has(r.key));
      expect(touched.length).toBe(theirs.size);
      expect(touched.some((r) => Number(r.n) === 1)).toBe(true);
      expect(touched.some((r) => Number(r.n) > 1)).toBe(true);
      expect(parts.rows.filter((r) => r.key.endsWith(`\u0001${ONLY_THEIRS}`)).map((r) => Number(r.n))).toEqual([1, 1]);
      // Estimates kept beside every sketch, as a series read keeps them: each true of its sketch.
      const estimated = await pool.query<AggRow>(`SELECT part, ${Object.keys(ESTIMATE_COLUMNS).join(', ')} FROM agg_values WHERE project_id = $1`, [projectId]);
      for (const [column, estimate] of Object.entries(ESTIMATE_COLUMNS)) {
        await pool.query(`UPDATE agg_values a SET ${estimate} = e.n FROM unnest($1::bigint[], $2::bigint[]) AS e(part, n) WHERE a.part = e.part`, [
          estimated.rows.map((r) => r.part),
          estimated.rows.map((r) => estimateSketchBytes((r[column] as Buffer | null) ?? null)),
        ]);
      }
      partsBefore = new Set(estimated.rows.map((r) => r.part));
      expect((await store.deleteUser(projectId, user)).events).toBe(counts.get(user));
    } finally {
      await store.close();
    }
    const rows = (
      await pool.query<AggRow>(
        `SELECT part, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')}, ${Object.values(ESTIMATE_COLUMNS).join(', ')} FROM agg_values WHERE project_id = $1`,
        [projectId],
      )
    ).rows;
    for (const row of rows) {
      for (const [column, estimate] of Object.entries(ESTIMATE_COLUMNS)) {
        if (row[estimate] !== null) expect(Number(row[estimate]), `${row.part} ${estimate}`).toBe(estimateSketchBytes((row[column] as Buffer | null) ?? null));
      }
    }
    // The page only the user viewed: its day and week rows updated in place to an event, a
    // visitor and no page visitor.
    const onlyTheirs = rows.filter((row) => row.dim === 'page' && row.value === ONLY_THEIRS && row.grain !== GRAIN_HOUR).sort((a, b) => a.grain - b.grain);
    expect(onlyTheirs.map((row) => [row.grain, Number(row.events), Number(row.page_views), row.visitors !== null, row.page_visitors])).toEqual([
      [GRAIN_DAY, 1, 0, true, null],
      [GRAIN_WEEK, 1, 0, true, null],
    ]);
    for (const row of onlyTheirs) expect(partsBefore.has(row.part)).toBe(false);
    // Rows of one part the erasure updated (a new number) whose visitor sketch it left as it was: their estimates stay.
    const kept = rows.filter((row) => row.grain !== GRAIN_HOUR && !partsBefore.has(row.part) && row[ESTIMATE_COLUMNS.visitors] !== null);
    expect(kept.length).toBeGreaterThan(0);
    let compared = 0;
    for (const grain of [GRAIN_DAY, GRAIN_WEEK] as const) {
      const [finer, per] = finerOf(grain);
      const fromFiner = new Map<string, Merged>();
      const own = new Map<string, Merged>();
      for (const row of rows) {
        if (row.grain === finer) mergeInto(fromFiner, `${row.dim}\u0000${Math.floor(Number(row.bucket) / per)}\u0000${row.value}\u0000${row.is_bot}`, row);
        if (row.grain === grain) mergeInto(own, `${row.dim}\u0000${row.bucket}\u0000${row.value}\u0000${row.is_bot}`, row);
      }
      expect([...own.keys()].sort()).toEqual([...fromFiner.keys()].sort());
      for (const [key, merged] of own) {
        const expected = fromFiner.get(key);
        expect([merged.events, merged.pageViews], key).toEqual([expected?.events, expected?.pageViews]);
        SKETCH_COLUMNS.forEach((column, c) => expect(hex(merged.sketches[c]), `${key} ${column}`).toBe(hex(expected?.sketches[c])));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // The hour rows are the events' (each built again from the hour's events) and not compared here.
    expect(rows.some((row) => row.grain === GRAIN_HOUR)).toBe(true);
  }, 120_000);
});
