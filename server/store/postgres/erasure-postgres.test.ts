import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { finerOf, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, SKETCH_COLUMNS } from '../aggregates/aggregate-schema.js';
import { ESTIMATE_COLUMNS } from '../aggregates/kept-estimates.js';
import { estimateSketchBytes, registerOfKey, unionSketchBytes } from '../aggregates/visitor-sketch.js';
import type { EventDimensions, StoredEvent } from '../event-store.js';
import { compactPostgresAggregates } from './postgres-aggregates.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * What PostgreSQL's erasure leaves in the aggregates (`postgres-aggregates.ts`): every row it made
 * again (hour rows patched at the erased keys' registers or built from their hour, day and week rows
 * merged again) is the row a project written without the user's events holds, byte for byte; each
 * day and week row, whether of one part (updated in place, only its changed sketches written) or of
 * several (written again as one), holds exactly the merge of its finer rows; and no estimate kept
 * beside a sketch is of a sketch other than the stored one. That every report stays exact is the
 * contract suites' part (`aggregate.contract.ts`).
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

/** Every aggregate row of a project, each key's parts merged: what two projects are compared by. */
async function aggregatesOf(projectId: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const values = await pool.query<AggRow>(`SELECT dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')} FROM agg_values WHERE project_id = $1`, [projectId]);
  const merged = new Map<string, Merged>();
  for (const row of values.rows) mergeInto(merged, `values ${row.dim} ${row.grain} ${row.bucket} ${row.is_bot} ${row.value}`, row);
  for (const [key, m] of merged) out.set(key, [m.events, m.pageViews, ...m.sketches.map(hex)]);
  const sessions = await pool.query<Record<string, string | boolean>>(
    `SELECT hour, session_id, is_bot, min(first_ts) AS first, max(last_ts) AS last, sum(events) AS events, sum(page_views) AS views FROM agg_sessions
     WHERE project_id = $1 GROUP BY hour, session_id, is_bot`,
    [projectId],
  );
  for (const row of sessions.rows) out.set(`sessions ${row.hour} ${row.session_id} ${row.is_bot}`, [row.first, row.last, row.events, row.views]);
  const states = await pool.query<Record<string, string | null>>(
    'SELECT session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views FROM agg_session_state WHERE project_id = $1',
    [projectId],
  );
  for (const row of states.rows) out.set(`state ${row.session_id}`, Object.values(row));
  const days = await pool.query<Record<string, string | boolean>>(
    `SELECT day, last_day, with_bots, sum(sessions) AS sessions, sum(bounces) AS bounces, sum(duration) AS duration, sum(page_views) AS views FROM agg_session_days
     WHERE project_id = $1 GROUP BY day, last_day, with_bots HAVING sum(sessions) <> 0 OR sum(page_views) <> 0 OR sum(duration) <> 0 OR sum(bounces) <> 0`,
    [projectId],
  );
  for (const row of days.rows) out.set(`days ${row.day} ${row.last_day} ${row.with_bots}`, [row.sessions, row.bounces, row.duration, row.views]);
  return out;
}

/** A key whose register is `register`: another visitor's, counted at a register the erased user's key sets. */
function keyAtRegister(prefix: string, register: number): string {
  for (let i = 0; ; i++) if (registerOfKey(`${prefix}-${i}`) === register) return `${prefix}-${i}`;
}

describe('the PostgreSQL erasure', () => {
  it.each([
    ['with the hll extension: hour rows patched at the erased keys\u2019 registers', true],
    ['without it: hour rows built from their hours\u2019 events', false],
  ])('leaves every aggregate row as a project written without the user\u2019s events has it, %s', async (_, hllExtension) => {
    const store = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000, hllExtension });
    await store.init();
    const erasedIn = newProjectId();
    const neverHad = newProjectId();
    try {
      expect(store.sketchMerge).toBe(hllExtension ? 'hll' : 'node');
      const day = START + 9 * 86_400_000;
      const events = [...generateProject({ projectId: erasedIn, start: day, days: 1, sessions: 1_500, seed: 11, idPrefix: 'g' })];
      const counts = new Map<string, number>();
      for (const e of events) if (e.userId !== null && !e.isBot) counts.set(e.userId, (counts.get(e.userId) ?? 0) + 1);
      const user = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] as string;
      const theirs = events.filter((e) => e.userId === user && e.eventType === 'page_view');
      const hours = [...new Set(theirs.map((e) => Math.floor(e.timestamp / 3_600_000)))];
      expect(hours.length).toBeGreaterThan(1);
      const template = theirs[0] as StoredEvent;
      const at = (hour: number, i: number) => hour * 3_600_000 + (i % 3_500) * 1_000 + 7;
      /** A page view of another visitor, or of the user (`who` their event), on `path`. */
      const view = (id: string, path: string, time: number, who?: StoredEvent): StoredEvent => ({
        ...template,
        eventId: id,
        timestamp: time,
        receivedAt: time + 40,
        userId: who?.userId ?? null,
        sessionId: who?.sessionId ?? `${id}-s`,
        visitorId: who?.visitorId ?? `${id}-v`,
        dimensions: { ...(template.dimensions as EventDimensions), path, anonymousId: who === undefined ? `${id}-a` : (who.dimensions?.anonymousId ?? null) },
      });
      const user0 = theirs.find((e) => Math.floor(e.timestamp / 3_600_000) === hours[0]) as StoredEvent;
      const user1 = theirs.find((e) => Math.floor(e.timestamp / 3_600_000) === hours[1]) as StoredEvent;
      const extra: StoredEvent[] = [];
      // /busy: 700 visitors in the user's first hour, a sketch of registers that stays one.
      for (let i = 0; i < 700; i++) extra.push(view(`busy-${i}`, '/busy', at(hours[0] as number, i)));
      extra.push(view('busy-user', '/busy', at(hours[0] as number, 701), user0));
      // Visitors with one key each at a register the user's key of that kind sets (their other keys
      // elsewhere): each such register must keep the value its other keys give it.
      const twin = (key: string | null | undefined) => keyAtRegister(`twin-${key}`, registerOfKey(key as string));
      const busyTwin = (id: string) => view(id, '/busy', at(hours[0] as number, 702));
      const anonymousTwin = busyTwin('twin-a');
      extra.push({ ...anonymousTwin, dimensions: { ...(anonymousTwin.dimensions as EventDimensions), anonymousId: twin(user0.dimensions?.anonymousId ?? user0.visitorId) } });
      extra.push({ ...busyTwin('twin-v'), visitorId: twin(user0.visitorId) });
      extra.push({ ...busyTwin('twin-s'), sessionId: twin(user0.sessionId) });
      // /crowd: 256 visitors and the user in another hour: registers before, an exact set after.
      for (let i = 0; i < 256; i++) extra.push(view(`crowd-${i}`, '/crowd', at(hours[1] as number, i)));
      extra.push(view('crowd-user', '/crowd', at(hours[1] as number, 300), user1));
      // /few: an exact set that loses one key.
      for (let i = 0; i < 5; i++) extra.push(view(`few-${i}`, '/few', at(hours[0] as number, i)));
      extra.push(view('few-user', '/few', at(hours[0] as number, 9), user0));
      // Another user's event in the user's session: its keys stay counted.
      extra.push({ ...view('shared-1', '/few', at(hours[0] as number, 10), user0), userId: 'another-user' });
      // Bots on /few in that hour, one at the register the user's anonymous id sets, and an event of
      // the user's flagged as a bot's: the hour's bot rows are patched apart from the others.
      extra.push({ ...view('bot-1', '/few', at(hours[0] as number, 11)), isBot: true });
      const botTwin = view('bot-twin', '/few', at(hours[0] as number, 12));
      extra.push({ ...botTwin, isBot: true, dimensions: { ...(botTwin.dimensions as EventDimensions), anonymousId: twin(user0.dimensions?.anonymousId ?? user0.visitorId) } });
      extra.push({ ...view('user-bot', '/few', at(hours[0] as number, 13), user0), isBot: true });
      const all = [...events, ...extra];
      const erasedCount = all.filter((e) => e.userId === user).length;
      for (const [projectId, list] of [
        [erasedIn, all],
        [neverHad, all.filter((e) => e.userId !== user).map((e) => ({ ...e, projectId: neverHad }))],
      ] as const) {
        await store.createProject(makeProject(projectId));
        // Most in large commits, compacted to one part a key; the rest in small ones: keys of several parts.
        const cut = Math.floor(list.length * 0.8);
        for (let i = 0; i < cut; i += 5_000) await store.write({ events: list.slice(i, Math.min(i + 5_000, cut)), chunks: [] });
        await compactPostgresAggregates(pool, { values: 0, sessions: 0, sessionDays: 0 });
        for (let i = cut; i < list.length; i += 50) await store.write({ events: list.slice(i, i + 50), chunks: [] });
      }
      const kinds = await pool.query<{ value: string; kind: number }>(
        `SELECT value, get_byte(visitors, 0) & 15 AS kind FROM agg_values WHERE project_id = $1 AND dim = 'page' AND grain = ${GRAIN_HOUR} AND value IN ('/busy', '/crowd', '/few') AND NOT is_bot`,
        [erasedIn],
      );
      // Sparse registers (3) for /busy and /crowd, an exact set (2) for /few.
      expect(Object.fromEntries(kinds.rows.map((r) => [r.value, r.kind]))).toEqual({ '/busy': 3, '/crowd': 3, '/few': 2 });
      expect((await store.deleteUser(erasedIn, user)).events).toBe(erasedCount);
      const [after, expected] = [await aggregatesOf(erasedIn), await aggregatesOf(neverHad)];
      expect(after.size).toBeGreaterThan(1_000);
      expect([...after.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [key, value] of expected) expect(after.get(key), key).toEqual(value);
    } finally {
      await store.close();
    }
  }, 180_000);

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
