import type Database from 'better-sqlite3';
import type pg from 'pg';
import { inTransaction } from '../postgres/postgres-transaction.js';
import type { FilteredKeep, KeepFiltered } from './filtered-tops.js';
import type { KeepSessionDays, SessionDaysKeep, SessionSpanTotal } from './session-days.js';
import { type SketchKit, VisitorSketch } from '../aggregates/visitor-sketch.js';
import { WEEK_DAYS } from '../aggregates/aggregate-schema.js';
import { KEYS_LOCK_SQL, NO_TIMEOUT } from './rollup-refresh.js';

/*
 * Keeping the rows a report computed from a clean day: the filtered top lists
 * (`filtered-tops.ts`) and the reports over sessions kept per day (`session-days.ts`). A day is kept only if, when its rows
 * are written, it is not marked and its version is still the one the report's snapshot saw (no
 * refresh built it since). A refresh deletes a day's kept rows and raises its version in the
 * transaction that builds it; an erasure deletes the kept rows of the days it marks. So rows
 * computed from a snapshot before either are refused, and none outlives them (a kept span of
 * sessions, which names none, stays past an erasure until the refresh of its marked days, and is
 * passed over meanwhile).
 */

/**
 * The SQLite keep on connection `db`, in one write transaction. It runs on the rollup thread
 * (`sqlite/rollup-sqlite-thread.ts`), which receives it as source text, so it must stay
 * self-contained (`kit` is the sketch code, made there from its own text); the writer thread's
 * commits and erasures and the refresh on the same thread are serialized with it by the
 * database's write lock. Then, in the same transaction, the week rows of every week of a day kept
 * and of every week asked for whose seven days are kept and none marked (7: `WEEK_DAYS`).
 */
export function prepareSqliteFilteredKeep(db: Database.Database, kit: SketchKit): (keep: FilteredKeep) => number {
  db.aggregate('sa_kept_week_union', {
    start: () => null,
    step: (merged: unknown, bytes: unknown): unknown =>
      bytes === null ? merged : ((merged as ReturnType<SketchKit['VisitorSketch']['empty']> | null) ?? kit.VisitorSketch.empty()).mergeBytes(bytes as Uint8Array),
    result: (merged: unknown): unknown => {
      if (merged === null) return null;
      const bytes = (merged as ReturnType<SketchKit['VisitorSketch']['empty']>).toBytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  });
  const marked = db.prepare('SELECT 1 FROM rollup_dirty WHERE project_id = ? AND day = ?').pluck();
  const version = db.prepare('SELECT version FROM rollup_versions WHERE project_id = ? AND day = ?').pluck();
  const keptAlready = db
    .prepare('SELECT 1 FROM rollup_filtered WHERE project_id = ? AND filter_dim = ? AND filter_value = ? AND dim = ? AND day = ? AND value IS NULL')
    .pluck();
  const insert = db.prepare(
    'INSERT INTO rollup_filtered (project_id, filter_dim, filter_value, dim, day, is_bot, value, n, visitors, visitor_hashes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  // A week row left beside a day kept again (by a process of the version before, which drops no week) is built again.
  const dropWeek = db.prepare('DELETE FROM rollup_filtered_weeks WHERE project_id = ? AND filter_dim = ? AND filter_value = ? AND dim = ? AND week = ?');
  const weekMarked = db.prepare('SELECT 1 FROM rollup_dirty WHERE project_id = @p AND day >= @first AND day < @end').pluck();
  const weekDims = db
    .prepare(
      `SELECT dim FROM rollup_filtered WHERE project_id = @p AND filter_dim = @fd AND filter_value = @fv AND day >= @first AND day < @end AND value IS NULL
         GROUP BY dim HAVING COUNT(*) = 7
       EXCEPT SELECT dim FROM rollup_filtered_weeks WHERE project_id = @p AND filter_dim = @fd AND filter_value = @fv AND week = @week AND value IS NULL`,
    )
    .pluck();
  // The days' marker rows (value null) make the week's.
  const insertWeek = db.prepare(
    `INSERT INTO rollup_filtered_weeks (project_id, filter_dim, filter_value, dim, week, is_bot, value, n, visitors, visitor_hashes)
     SELECT @p, @fd, @fv, @dim, @week, is_bot, value, SUM(n), sa_kept_week_union(visitors), sa_kept_week_union(visitor_hashes) FROM rollup_filtered
     WHERE project_id = @p AND filter_dim = @fd AND filter_value = @fv AND dim = @dim AND day >= @first AND day < @end GROUP BY is_bot, value`,
  );
  const keep = db.transaction((k: FilteredKeep): number => {
    let kept = 0;
    const weeks = new Set(k.weeks ?? []);
    for (const day of k.days) {
      if (marked.get(k.projectId, day.day) !== undefined) continue;
      if (((version.get(k.projectId, day.day) as number | undefined) ?? 0) !== day.version) continue;
      for (const { dim, rows } of day.dims) {
        if (keptAlready.get(k.projectId, k.filterDim, k.filterValue, dim, day.day) !== undefined) continue;
        insert.run(k.projectId, k.filterDim, k.filterValue, dim, day.day, 0, null, 0, null, null);
        for (const row of rows) {
          insert.run(k.projectId, k.filterDim, k.filterValue, dim, day.day, row.isBot ? 1 : 0, row.value, row.n, row.visitors, row.visitorHashes);
        }
        dropWeek.run(k.projectId, k.filterDim, k.filterValue, dim, Math.floor(day.day / 7));
        kept++;
      }
      weeks.add(Math.floor(day.day / 7));
    }
    for (const week of weeks) {
      const span = { p: k.projectId, first: week * 7, end: week * 7 + 7 };
      if (weekMarked.get(span) !== undefined) continue;
      const at = { ...span, fd: k.filterDim, fv: k.filterValue, week };
      for (const dim of weekDims.all(at) as string[]) insertWeek.run({ ...at, dim });
    }
    return kept;
  });
  return (k) => keep.immediate(k);
}

/**
 * The SQLite keep of session days on connection `db`, in one write transaction, as
 * {@link prepareSqliteFilteredKeep} (self-contained, for the rollup thread). A day kept already is
 * replaced: a read keeps a day again when the count of sessions wholly inside it has changed. A
 * span of days is kept only if every day of it is clean at the version given.
 */
export function prepareSqliteSessionDaysKeep(db: Database.Database): (keep: SessionDaysKeep) => number {
  const marked = db.prepare('SELECT 1 FROM rollup_dirty WHERE project_id = ? AND day = ?').pluck();
  const version = db.prepare('SELECT version FROM rollup_versions WHERE project_id = ? AND day = ?').pluck();
  const clear = db.prepare('DELETE FROM rollup_kept_sessions WHERE project_id = ? AND report = ? AND with_bots = ? AND day = ?');
  const insert = db.prepare('INSERT INTO rollup_kept_sessions (project_id, report, with_bots, day, session_id, piece, total, spans) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const insertSpan = db.prepare(
    'INSERT OR REPLACE INTO rollup_kept_spans (project_id, report, with_bots, first_day, last_day, sessions, versions, total) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const clean = (projectId: string, day: number, at: number) =>
    marked.get(projectId, day) === undefined && ((version.get(projectId, day) as number | undefined) ?? 0) === at;
  const keep = db.transaction((k: SessionDaysKeep): number => {
    const bots = k.withBots ? 1 : 0;
    let kept = 0;
    for (const day of k.days) {
      if (!clean(k.projectId, day.day, day.version)) continue;
      clear.run(k.projectId, k.report, bots, day.day);
      // The count as text: `session-days.ts` reads it back as such.
      insert.run(k.projectId, k.report, bots, day.day, null, null, day.total.join(','), `c${day.sessions}`);
      for (const span of day.spans) insert.run(k.projectId, k.report, bots, day.day, span.sessionId, span.piece, null, null);
      kept++;
    }
    for (const span of k.spans ?? []) {
      if (!span.versions.every((at, i) => clean(k.projectId, span.first + i, at))) continue;
      const versions = span.versions.reduce((sum, at) => sum + at, 0);
      insertSpan.run(k.projectId, k.report, bots, span.first, span.last, span.sessions, versions, span.total.join(','));
      kept++;
    }
    return kept;
  });
  return (k) => keep.immediate(k);
}

/**
 * Keeps days of one project on PostgreSQL: each day of `days` that may be kept is written by
 * `write`; then `after`, in the same transaction, under the same dictionary lock.
 */
export type PostgresDayKeeps = (
  projectId: string,
  days: ReadonlyArray<{ day: number; version: number }>,
  write: PostgresDayWrite,
  after?: (client: pg.PoolClient) => Promise<void>,
) => Promise<number>;

/** Writes a day's kept rows on PostgreSQL, inside the keep's transaction, once the day may be kept; returns what it kept. */
export type PostgresDayWrite = (client: pg.PoolClient, day: number) => Promise<number>;

/**
 * Keeps on PostgreSQL, each in one transaction, one at a time. A keep takes the project's
 * dictionary lock first, which an erasure holds to its commit and a refresh from before it deletes
 * a day's rows to its commit, so neither is in flight while it checks; then each day's refresh
 * lock, without waiting (a refresh holding it waits for the dictionary lock: the day is passed
 * over, and computed again later), and writes the day only if it is not marked and its version is
 * the one the rows were computed at. An erasure drops a keep holding the lock with a claim
 * (`rollup-erasure.ts`): it rejects, and a later read computes those days again. One at a time: a
 * dashboard's first view hands on several, and each may wait seconds for the dictionary lock (a
 * refresh building a day), holding one of the two connections that builds and keeps share
 * (`postgres-store.ts`). Resolves to the sum of what the writes returned.
 */
export function createPostgresDayKeeps(pool: pg.Pool): PostgresDayKeeps {
  let last: Promise<unknown> = Promise.resolve();
  const keep: PostgresDayKeeps = (projectId, days, write, after) =>
    inTransaction(pool, `BEGIN; ${NO_TIMEOUT}`, async (client) => {
      await client.query(KEYS_LOCK_SQL, [projectId]);
      let kept = 0;
      for (const { day, version } of days) {
        const state = await client.query<{ claimed: boolean; marked: boolean; version: string | null }>(
          `SELECT pg_try_advisory_xact_lock(hashtext('rollup:' || $1::text), $2::int) AS claimed,
             EXISTS (SELECT 1 FROM rollup_dirty WHERE project_id = $1 AND day = $2) AS marked,
             (SELECT version FROM rollup_versions WHERE project_id = $1 AND day = $2) AS version`,
          [projectId, day],
        );
        const s = state.rows[0];
        if (s === undefined || !s.claimed || s.marked || Number(s.version ?? 0) !== version) continue;
        kept += await write(client, day);
      }
      await after?.(client);
      return kept;
    });
  return (projectId, days, write, after) => {
    const kept = last.then(() => keep(projectId, days, write, after));
    last = kept.catch(() => undefined);
    return kept;
  };
}

/**
 * The PostgreSQL keep of filtered rows, through a store's one {@link createPostgresDayKeeps}; then
 * the week rows of every week of a day given and of every week asked for, as on SQLite
 * ({@link prepareSqliteFilteredKeep}).
 */
export function createPostgresFilteredKeep(keepDays: PostgresDayKeeps): KeepFiltered {
  return (k) => {
    const byDay = new Map(k.days.map((day) => [day.day, day]));
    const weeks = new Set([...(k.weeks ?? []), ...k.days.map((day) => Math.floor(day.day / WEEK_DAYS))]);
    const keepWeeks = (client: pg.PoolClient) => keepPostgresWeeks(client, k, weeks);
    return keepDays(
      k.projectId,
      k.days,
      async (client, dayNumber) => {
        const day = byDay.get(dayNumber) as FilteredKeep['days'][number];
        const keptAlready = await client.query<{ kept: string[] | null }>(
          'SELECT array_agg(dim) AS kept FROM rollup_filtered WHERE project_id = $1 AND filter_dim = $2 AND filter_value = $3 AND day = $4 AND value IS NULL',
          [k.projectId, k.filterDim, k.filterValue, day.day],
        );
        const keptDims = new Set(keptAlready.rows[0]?.kept ?? []);
        let kept = 0;
        const rows: Array<{ dim: string; isBot: boolean; value: string | null; n: number; visitors: Uint8Array | null; visitorHashes: Uint8Array | null }> = [];
        for (const { dim, rows: dimRows } of day.dims) {
          if (keptDims.has(dim)) continue;
          rows.push({ dim, isBot: false, value: null, n: 0, visitors: null, visitorHashes: null }, ...dimRows.map((row) => ({ dim, ...row })));
          kept++;
        }
        if (rows.length === 0) return 0;
        // A week row left beside a day kept again (by a process of the version before, which drops no week) is built again.
        await client.query('DELETE FROM rollup_filtered_weeks WHERE project_id = $1 AND filter_dim = $2 AND filter_value = $3 AND week = $4 AND dim = ANY($5::text[])', [
          k.projectId,
          k.filterDim,
          k.filterValue,
          Math.floor(day.day / WEEK_DAYS),
          day.dims.filter(({ dim }) => !keptDims.has(dim)).map(({ dim }) => dim),
        ]);
        await insertFilteredRows(client, 'rollup_filtered', k, day.day, rows);
        return kept;
      },
      keepWeeks,
    );
  };
}

/**
 * The week rows of `weeks` of a keep's filter whose seven days are kept and none marked, for each
 * dimension not kept as a week yet: counts summed and sketches merged here (the same bytes with
 * the `hll` extension or without), in the keep's transaction.
 */
async function keepPostgresWeeks(client: pg.PoolClient, k: FilteredKeep, weeks: ReadonlySet<number>): Promise<void> {
  for (const week of weeks) {
    const [first, end] = [week * WEEK_DAYS, (week + 1) * WEEK_DAYS];
    const at = [k.projectId, k.filterDim, k.filterValue, first, end];
    const { rows: dims } = await client.query<{ dim: string }>(
      `SELECT dim FROM rollup_filtered WHERE project_id = $1 AND filter_dim = $2 AND filter_value = $3 AND day >= $4 AND day < $5 AND value IS NULL
         AND NOT EXISTS (SELECT 1 FROM rollup_dirty WHERE project_id = $1 AND day >= $4 AND day < $5)
         GROUP BY dim HAVING COUNT(*) = ${WEEK_DAYS}
       EXCEPT SELECT dim FROM rollup_filtered_weeks WHERE project_id = $1 AND filter_dim = $2 AND filter_value = $3 AND week = $6 AND value IS NULL`,
      [...at, week],
    );
    if (dims.length === 0) continue;
    const { rows } = await client.query<{ dim: string; is_bot: boolean; value: string | null; n: string; visitors: Uint8Array | null; visitor_hashes: Uint8Array | null }>(
      `SELECT dim, is_bot, value, n, visitors, visitor_hashes FROM rollup_filtered
       WHERE project_id = $1 AND filter_dim = $2 AND filter_value = $3 AND day >= $4 AND day < $5 AND dim = ANY($6::text[])`,
      [...at, dims.map((d) => d.dim)],
    );
    // The days' marker rows (value null) make the week's.
    const merged = new Map<string, { dim: string; isBot: boolean; value: string | null; n: number; visitors: VisitorSketch | null; hashes: VisitorSketch | null }>();
    for (const row of rows) {
      const key = JSON.stringify([row.dim, row.is_bot, row.value]);
      let into = merged.get(key);
      if (into === undefined) merged.set(key, (into = { dim: row.dim, isBot: row.is_bot, value: row.value, n: 0, visitors: null, hashes: null }));
      into.n += Number(row.n);
      if (row.visitors !== null) into.visitors = (into.visitors ?? VisitorSketch.empty()).mergeBytes(row.visitors);
      if (row.visitor_hashes !== null) into.hashes = (into.hashes ?? VisitorSketch.empty()).mergeBytes(row.visitor_hashes);
    }
    const bytes = (sketch: VisitorSketch | null) => (sketch === null ? null : sketch.toBytes());
    const weekRows = [...merged.values()].map((r) => ({ dim: r.dim, isBot: r.isBot, value: r.value, n: r.n, visitors: bytes(r.visitors), visitorHashes: bytes(r.hashes) }));
    await insertFilteredRows(client, 'rollup_filtered_weeks', k, week, weekRows);
  }
}

/** Kept filtered rows of one day (`rollup_filtered`) or week (`rollup_filtered_weeks`) of a keep's filter, in one statement. */
async function insertFilteredRows(
  client: pg.PoolClient,
  table: 'rollup_filtered' | 'rollup_filtered_weeks',
  k: FilteredKeep,
  at: number,
  rows: ReadonlyArray<{ dim: string; isBot: boolean; value: string | null; n: number; visitors: Uint8Array | null; visitorHashes: Uint8Array | null }>,
): Promise<void> {
  await client.query(
    `INSERT INTO ${table} (project_id, filter_dim, filter_value, dim, ${table === 'rollup_filtered' ? 'day' : 'week'}, is_bot, value, n, visitors, visitor_hashes)
     SELECT $1, $2, $3, d, $4, b, v, n, s, h FROM unnest($5::text[], $6::bool[], $7::text[], $8::bigint[], $9::bytea[], $10::bytea[]) AS r(d, b, v, n, s, h)`,
    [
      k.projectId,
      k.filterDim,
      k.filterValue,
      at,
      rows.map((r) => r.dim),
      rows.map((r) => r.isBot),
      rows.map((r) => r.value),
      rows.map((r) => r.n),
      rows.map((r) => (r.visitors === null ? null : Buffer.from(r.visitors))),
      rows.map((r) => (r.visitorHashes === null ? null : Buffer.from(r.visitorHashes))),
    ],
  );
}

/** The PostgreSQL keep of session days, through a store's one {@link createPostgresDayKeeps}; a day kept already is replaced. */
export function createPostgresSessionDaysKeep(keepDays: PostgresDayKeeps): KeepSessionDays {
  /** The spans of `k` whose every day may be kept (each checked as a kept day is), in one transaction; resolves to how many. */
  const keepSpans = (k: SessionDaysKeep, spans: readonly SessionSpanTotal[]): Promise<number> => {
    const at = new Map<number, number>();
    for (const span of spans) span.versions.forEach((version, i) => at.set(span.first + i, version));
    const passed = new Set<number>();
    let kept = 0;
    return keepDays(
      k.projectId,
      [...at].map(([day, version]) => ({ day, version })),
      async (_client, day) => (passed.add(day), 0),
      async (client) => {
        const ok = spans.filter((span) => span.versions.every((version, i) => passed.has(span.first + i) && at.get(span.first + i) === version));
        if (ok.length === 0) return;
        await client.query(
          `INSERT INTO rollup_kept_spans (project_id, report, with_bots, first_day, last_day, sessions, versions, total)
           SELECT $1, $2, $3, f, l, n, v, t FROM unnest($4::int[], $5::int[], $6::bigint[], $7::bigint[], $8::text[]) AS x(f, l, n, v, t)
           ON CONFLICT (project_id, report, with_bots, first_day, last_day) DO UPDATE SET sessions = EXCLUDED.sessions, versions = EXCLUDED.versions, total = EXCLUDED.total`,
          [
            k.projectId,
            k.report,
            k.withBots ? 1 : 0,
            ok.map((span) => span.first),
            ok.map((span) => span.last),
            ok.map((span) => span.sessions),
            ok.map((span) => span.versions.reduce((sum, version) => sum + version, 0)),
            ok.map((span) => span.total.join(',')),
          ],
        );
        kept = ok.length;
      },
    ).then(() => kept);
  };
  return async (k) => {
    const bots = k.withBots ? 1 : 0;
    const spans = k.spans === undefined || k.spans.length === 0 ? 0 : await keepSpans(k, k.spans);
    if (k.days.length === 0) return spans;
    const byDay = new Map(k.days.map((day) => [day.day, day]));
    const days = await keepDays(k.projectId, k.days, async (client, dayNumber) => {
      const day = byDay.get(dayNumber) as SessionDaysKeep['days'][number];
      await client.query('DELETE FROM rollup_kept_sessions WHERE project_id = $1 AND report = $2 AND with_bots = $3 AND day = $4', [k.projectId, k.report, bots, day.day]);
      await client.query(
        `INSERT INTO rollup_kept_sessions (project_id, report, with_bots, day, session_id, piece, total, spans)
         SELECT $1, $2, $3, $4, s, p, t, d FROM unnest($5::text[], $6::text[], $7::text[], $8::text[]) AS x(s, p, t, d)`,
        [
          k.projectId,
          k.report,
          bots,
          day.day,
          [null, ...day.spans.map((span) => span.sessionId)],
          [null, ...day.spans.map((span) => span.piece)],
          [day.total.join(','), ...day.spans.map(() => null)],
          [`c${day.sessions}`, ...day.spans.map(() => null)],
        ],
      );
      return 1;
    });
    return spans + days;
  };
}
