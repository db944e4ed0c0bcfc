import { describe, expect, it } from 'vitest';
import { generateProject, writeProject } from '../server/report-fixtures.js';
import type { EventStore, StoredEvent } from '../../server/store/event-store.js';
import { newProjectId } from './event-store.fixtures.js';
import { BUILT_IN_EVENT_TYPES, DIMENSION_COLUMNS, type FilterDimension, type ReportQuery, type TopDimension } from '../../server/store/report-store.js';
import { expectEstimate } from './estimates.js';
import { AGGREGATE_SHAPE } from '../../server/store/aggregates/aggregate-schema.js';
import type { RollupLocation } from './rollup.contract.js';

/*
 * The aggregates kept at ingest (docs/decisions.md, "Aggregates at ingest") answer what direct SQL
 * over the events answers: exact counts equal, unique counts within the sketch's bound (equal up
 * to its exact threshold, which the generated projects stay under), over ranges that start and end
 * inside an hour, inside a day and on boundaries, and after everything that changes stored events:
 * late events, re-sent duplicates, an erasure, retention, and the build of an upgraded database.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 1, 2);
const DAYS = 3;

type Row = Record<string, unknown>;
const n = (v: unknown) => Number(v ?? 0);

/** Ranges over the generated project: whole days, ends inside hours, one piece of an hour, one hour boundary. */
const RANGES: ReadonlyArray<readonly [string, number, number]> = [
  ['whole days', START, START + DAYS * DAY],
  ['ends inside hours', START + 5 * HOUR + 17 * 60_000, START + (DAYS - 1) * DAY + 7 * HOUR + 3 * 60_000],
  ['inside one hour', START + DAY + 10 * 60_000, START + DAY + 50 * 60_000],
  ['across one hour boundary', START + DAY + 9 * HOUR + 40 * 60_000, START + DAY + 10 * HOUR + 20 * 60_000],
  ['one whole day', START + DAY, START + 2 * DAY],
  ['a whole day and the hours around it', START + DAY - 2 * HOUR - 7 * 60_000, START + 2 * DAY + HOUR + 11 * 60_000],
  ['the last day, whose first midnight some sessions cross from the days before', START + 2 * DAY, START + 3 * DAY],
  ['empty', START - 2 * DAY, START - DAY],
];

/**
 * A project of 20 days from a Monday, 2026-02-02 (day 20,486, four days into a week row's week:
 * weeks count from Thursday 1970-01-01): three days, two whole weeks (from day 20,489 and 20,496),
 * three days.
 */
const WEEKS_START = START;
const WEEKS_DAYS = 20;
const FIRST_WEEK = Date.UTC(2026, 1, 5);

/** Ranges over the 20-day project: whole weeks with days at either end, with hours and pieces of hours, exactly two weeks, one week. */
const WEEK_RANGES: ReadonlyArray<readonly [string, number, number]> = [
  ['whole weeks and the days around them', WEEKS_START, WEEKS_START + WEEKS_DAYS * DAY],
  ['whole weeks and the days and hours around them', WEEKS_START + 5 * HOUR + 17 * 60_000, WEEKS_START + (WEEKS_DAYS - 1) * DAY + 7 * HOUR + 3 * 60_000],
  ['exactly two weeks', FIRST_WEEK, FIRST_WEEK + 14 * DAY],
  ['one week and a day', FIRST_WEEK + 6 * DAY, FIRST_WEEK + 14 * DAY],
];

const byteCompare = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Runs the aggregate contract on a kind of database. */
export function describeAggregates(name: string, location: () => Promise<RollupLocation>): void {
  describe(`${name}: aggregates kept at ingest`, () => {
    const withStore = async (body: (store: EventStore, loc: RollupLocation, projectId: string) => Promise<void>) => {
      const loc = await location();
      const store = loc.open();
      await store.init();
      try {
        await body(store, loc, newProjectId());
      } finally {
        await store.close();
      }
    };

    const where = (q: ReportQuery, values: unknown[]): string => {
      values.push(q.projectId, q.from, q.to);
      let sql = 'project_id = ? AND timestamp >= ? AND timestamp < ?';
      if (!q.includeBots) {
        sql += ' AND is_bot = ?';
        values.push(false);
      }
      for (const [d, value] of Object.entries(q.filters) as Array<[FilterDimension, string]>) {
        sql += ` AND ${DIMENSION_COLUMNS[d]} = ?`;
        values.push(value);
      }
      return sql;
    };
    const visitor = (q: ReportQuery) => (q.visitorKey === 'hash' ? 'visitor_id' : 'COALESCE(anonymous_id, visitor_id)');

    /** Totals, by bucket when `bucketMs` is given, as direct SQL counts them. */
    const sqlTotals = async (loc: RollupLocation, q: ReportQuery, bucketMs?: number): Promise<Row[]> => {
      const values: unknown[] = [];
      const bucket = bucketMs === undefined ? '0' : `(timestamp / ${bucketMs}) * ${bucketMs}`;
      return loc.sql(
        `SELECT ${bucket} AS t, COUNT(*) AS events, SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS page_views,
           COUNT(DISTINCT ${visitor(q)}) AS visitors, COUNT(DISTINCT session_id) AS sessions
         FROM events WHERE ${where(q, values)} GROUP BY 1 ORDER BY 1`,
        values,
      );
    };

    const expectTotals = (actual: { events: number; pageViews: number; visitors: number; sessions: number }, row: Row | undefined, what: string) => {
      expect({ events: actual.events, pageViews: actual.pageViews }, what).toEqual({ events: n(row?.events), pageViews: n(row?.page_views) });
      expectEstimate(actual.visitors, n(row?.visitors), `${what}: visitors`);
      expectEstimate(actual.sessions, n(row?.sessions), `${what}: sessions`);
    };

    /** Every panel the aggregates answer, checked against direct SQL, over every range. */
    const expectAsSql = async (store: EventStore, loc: RollupLocation, projectId: string, ranges = RANGES) => {
      const r = store.reports;
      for (const [range, from, to] of ranges) {
        const q = (over: Partial<ReportQuery> = {}): ReportQuery => ({ projectId, from, to, filters: {}, includeBots: false, visitorKey: 'anonymous', ...over });
        for (const [label, query] of [
          ['totals', q()],
          ['by hash', q({ visitorKey: 'hash' })],
          ['with bots', q({ includeBots: true })],
          ['one filter', q({ filters: { page: '/pricing' } })],
          ['an event type', q({ filters: { event_type: 'purchase' } })],
        ] as const) {
          expectTotals(await r.totals(query), (await sqlTotals(loc, query))[0], `${range}, ${label}`);
        }
        for (const bucket of [HOUR, DAY]) {
          for (const query of [q(), q({ filters: { device: 'mobile' } }), q({ visitorKey: 'hash' }), q({ includeBots: true })]) {
            const rows = await sqlTotals(loc, query, bucket);
            // Twice: the second read reads the estimates the first one had the store keep.
            for (const read of ['first', 'second']) {
              const series = await r.series(query, bucket);
              expect(series.map((p) => p.time), `${range}: series buckets, ${read} read`).toEqual(rows.map((row) => n(row.t)));
              series.forEach((p, i) => expectTotals(p, rows[i], `${range}: bucket ${new Date(p.time).toISOString()}, ${read} read`));
              await r.keptSettled();
            }
          }
        }
        for (const dimension of ['page', 'browser', 'channel', 'custom_event', 'event_type'] as TopDimension[]) {
          for (const query of [q(), q({ visitorKey: 'hash', includeBots: true })]) {
            const values: unknown[] = [];
            const column = dimension === 'custom_event' ? 'event_type' : DIMENSION_COLUMNS[dimension];
            const conditions = where(query, values);
            let extra = `${column} IS NOT NULL`;
            if (dimension !== 'custom_event' && dimension !== 'event_type') extra += " AND event_type = 'page_view'";
            if (dimension === 'custom_event') {
              extra += ` AND event_type NOT IN (${BUILT_IN_EVENT_TYPES.map(() => '?').join(', ')})`;
              values.push(...BUILT_IN_EVENT_TYPES);
            }
            const rows = await loc.sql(
              `SELECT ${column} AS value, COUNT(*) AS events, COUNT(DISTINCT ${visitor(query)}) AS visitors FROM events
               WHERE ${conditions} AND ${extra} GROUP BY ${column}`,
              values,
            );
            const expected = rows
              .map((row) => ({ value: String(row.value), events: n(row.events), visitors: n(row.visitors) }))
              .sort((a, b) => b.events - a.events || byteCompare(a.value, b.value))
              .slice(0, 4);
            const top = await r.top(query, dimension, 4);
            expect(top.map(({ value, events }) => ({ value, events })), `${range}: top ${dimension}`).toEqual(expected.map(({ value, events }) => ({ value, events })));
            top.forEach((row, i) => expectEstimate(row.visitors, expected[i]?.visitors ?? -1, `${range}: top ${dimension} ${row.value}`));
          }
        }
        for (const query of [q(), q({ visitorKey: 'hash', includeBots: true })]) {
          // Errors: counts, the latest time and stack exact, visitors within the sketch's bound.
          const values: unknown[] = [];
          const rows = await loc.sql(
            `SELECT properties, timestamp, event_id, ${visitor(query)} AS visitor FROM events WHERE ${where(query, values)} AND event_type = 'error'`,
            values,
          );
          const groups = new Map<string, { count: number; visitors: Set<string>; last: Row }>();
          for (const row of rows) {
            // SQLite answers the JSON text, PostgreSQL the parsed object.
            const properties = (typeof row.properties === 'string' ? JSON.parse(row.properties) : row.properties) as Record<string, unknown>;
            row.stack = typeof properties.stack === 'string' ? properties.stack : null;
            const key = typeof properties.message === 'string' ? properties.message : '';
            let g = groups.get(key);
            if (g === undefined) groups.set(key, (g = { count: 0, visitors: new Set(), last: row }));
            g.count++;
            if (row.visitor !== null) g.visitors.add(String(row.visitor));
            if (n(row.timestamp) > n(g.last.timestamp) || (n(row.timestamp) === n(g.last.timestamp) && String(row.event_id) > String(g.last.event_id))) g.last = row;
          }
          const expected = [...groups.entries()].sort((a, b) => b[1].count - a[1].count || byteCompare(a[0], b[0])).slice(0, 5);
          const errors = await r.errors(query, 5);
          expect(
            errors.map(({ message, count, lastSeen, lastStack }) => ({ message, count, lastSeen, lastStack })),
            `${range}: errors`,
          ).toEqual(expected.map(([message, g]) => ({ message, count: g.count, lastSeen: n(g.last.timestamp), lastStack: g.last.stack ?? null })));
          errors.forEach((e, i) => expectEstimate(e.visitors, expected[i]?.[1].visitors.size ?? -1, `${range}: errors ${e.message}`));
        }
        for (const includeBots of [false, true]) {
          const values: unknown[] = [];
          const [s] = await loc.sql(
            `WITH s AS (SELECT session_id, MAX(timestamp) - MIN(timestamp) AS duration, SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS pv
               FROM events WHERE ${where(q({ includeBots }), values)} AND session_id IS NOT NULL GROUP BY session_id)
             SELECT COUNT(*) AS sessions, SUM(CASE WHEN pv <= 1 THEN 1 ELSE 0 END) AS bounces, SUM(duration) AS duration, SUM(pv) AS pv FROM s`,
            values,
          );
          expect(await r.sessions(q({ includeBots })), `${range}: sessions${includeBots ? ' with bots' : ''}`).toEqual({
            sessions: n(s?.sessions),
            bounces: n(s?.bounces),
            totalDurationMs: n(s?.duration),
            pageViews: n(s?.pv),
          });
        }
      }
    };

    const generated = (projectId: string, seed: number, idPrefix: string, start = START, days = DAYS): StoredEvent[] => [
      ...generateProject({ projectId, start, days, sessions: 60, seed, idPrefix }),
    ];

    it('answers as direct SQL over ranges that start and end inside hours, inside days and on boundaries', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 60, seed: 11 }, 150);
        expect(n((await loc.sql('SELECT COUNT(*) AS n FROM events WHERE project_id = ?', [projectId]))[0]?.n)).toBeGreaterThan(300);
        await expectAsSql(store, loc, projectId);
      });
    });

    it('is what the reports read: a change to an aggregate row shows', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 20, seed: 12 }, 150);
        const q: ReportQuery = { projectId, from: START, to: START + DAYS * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const before = (await store.reports.totals(q)).events;
        await loc.sql("UPDATE agg_values SET events = events + 1000 WHERE project_id = ? AND dim = '' AND grain = 1 AND bucket = ? AND is_bot = ?", [
          projectId,
          START / DAY + 1,
          false,
        ]);
        expect((await store.reports.totals(q)).events).toBe(before + 1000);
      });
    });

    it('keeps the estimates a series computed beside its rows, reads them, and keeps none for an hour not over', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 20, seed: 15 }, 150);
        // One event in the hour now, which is not over.
        const now = Date.now();
        const [one] = generated(projectId, 16, 'now');
        await store.write({ events: [{ ...(one as StoredEvent), timestamp: now, receivedAt: now }], chunks: [] });
        const q: ReportQuery = { projectId, from: START, to: Math.ceil(now / HOUR) * HOUR, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const estimates = (grain: number) =>
          loc.sql(
            `SELECT bucket, visitors_estimate AS v, visitor_hashes_estimate AS vh, sessions_estimate AS s FROM agg_values
             WHERE project_id = ? AND dim = '' AND value = '' AND grain = ? AND is_bot = ? ORDER BY bucket`,
            [projectId, grain, false],
          );
        expect((await estimates(0)).filter((row) => row.v !== null || row.s !== null)).toEqual([]);
        const first = await store.reports.series(q, HOUR);
        await store.reports.keptSettled();
        const hours = await estimates(0);
        const thisHour = Math.floor(now / HOUR);
        // Every hour over has its estimates, which are the first read's numbers; the hour now has none.
        expect(hours.filter((row) => n(row.bucket) < thisHour).length).toBeGreaterThan(10);
        expect(hours.filter((row) => n(row.bucket) < thisHour && (row.v === null || row.s === null))).toEqual([]);
        // (Unless the hour turned between the write and the read, which made it one that is over.)
        if (Math.floor(Date.now() / HOUR) === thisHour) expect(hours.filter((row) => n(row.bucket) === thisHour)).toEqual([{ bucket: expect.anything(), v: null, vh: null, s: null }]);
        const byHour = new Map(first.map((p) => [p.time / HOUR, p]));
        for (const row of hours.filter((r) => n(r.bucket) < thisHour)) expect([n(row.v), n(row.s)]).toEqual([byHour.get(n(row.bucket))?.visitors, byHour.get(n(row.bucket))?.sessions]);
        // What the next series reads: a change to a kept estimate shows, as the only change.
        const hour = n(hours[1]?.bucket);
        await loc.sql("UPDATE agg_values SET visitors_estimate = visitors_estimate + 1000, sessions_estimate = sessions_estimate + 2000 WHERE project_id = ? AND dim = '' AND grain = 0 AND bucket = ? AND is_bot = ?", [
          projectId,
          hour,
          false,
        ]);
        expect(first.filter((p) => p.time === hour * HOUR)).toHaveLength(1);
        const second = await store.reports.series(q, HOUR);
        expect(second).toEqual(first.map((p) => (p.time === hour * HOUR ? { ...p, visitors: p.visitors + 1000, sessions: p.sessions + 2000 } : p)));
        // With bots (two rows a point) the sketches are merged and no estimate is read.
        const withBots = { ...q, includeBots: true, from: hour * HOUR, to: (hour + 1) * HOUR };
        expectTotals((await store.reports.series(withBots, HOUR))[0] ?? { events: 0, pageViews: 0, visitors: 0, sessions: 0 }, (await sqlTotals(loc, withBots, HOUR))[0], 'with bots');
        // Days the same way: a daily series keeps the day rows' estimates, every day but today.
        await store.reports.series(q, DAY);
        await store.reports.keptSettled();
        const days = await estimates(1);
        expect(days.filter((row) => n(row.bucket) < Math.floor(now / DAY) && (row.v === null || row.s === null))).toEqual([]);
        expect(days.filter((row) => n(row.bucket) === Math.floor(now / DAY)).map((row) => row.v)).toEqual([null]);
        // A series by the hashed visitor keeps that sketch's estimate too.
        await store.reports.series({ ...q, visitorKey: 'hash' }, DAY);
        await store.reports.keptSettled();
        expect((await estimates(1)).filter((row) => n(row.bucket) < Math.floor(now / DAY) && row.vh === null)).toEqual([]);
      });
    });

    it('never reads an estimate its row outgrew: a late event, an erasure and retention each change what a kept point says', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 20, seed: 17 }, 150);
        const q: ReportQuery = { projectId, from: START, to: START + DAYS * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const keptSeries = async () => {
          for (const bucket of [HOUR, DAY]) await store.reports.series(q, bucket);
          await store.reports.keptSettled();
          return { hours: await store.reports.series(q, HOUR), days: await store.reports.series(q, DAY) };
        };
        const expectAsEvents = async (what: string) => {
          for (const bucket of [HOUR, DAY]) {
            const series = await store.reports.series(q, bucket);
            const rows = await sqlTotals(loc, q, bucket);
            expect(series.map((p) => p.time), what).toEqual(rows.map((row) => n(row.t)));
            series.forEach((p, i) => expectTotals(p, rows[i], `${what}: ${new Date(p.time).toISOString()}`));
          }
        };
        const before = await keptSeries();
        // A visitor new to a kept hour and day, a day late.
        const [late] = generated(projectId, 18, 'late');
        const at = START + DAY + 5 * HOUR + 60_000;
        await store.write({ events: [{ ...(late as StoredEvent), timestamp: at, receivedAt: START + DAYS * DAY, userId: 'late-user', visitorId: 'late-visitor', sessionId: 'late-session' }], chunks: [] });
        await expectAsEvents('after a late event');
        const after = await keptSeries();
        expect(after.hours.find((p) => p.time === START + DAY + 5 * HOUR)?.visitors).toBe((before.hours.find((p) => p.time === START + DAY + 5 * HOUR)?.visitors ?? 0) + 1);
        expect(after.days.find((p) => p.time === START + DAY)?.sessions).toBe((before.days.find((p) => p.time === START + DAY)?.sessions ?? 0) + 1);
        // The same visitor erased, then retention past the first day.
        expect((await store.deleteUser(projectId, 'late-user')).events).toBe(1);
        await expectAsEvents('after an erasure');
        expect((await keptSeries()).hours).toEqual(before.hours);
        await store.deleteOlderThan(START + DAY + 2 * HOUR + 30 * 60_000);
        await expectAsEvents('after retention');
        await keptSeries();
        await expectAsEvents('after retention, kept');
      });
    });

    it('reads whole weeks from week rows, kept exact through late events, duplicates, an erasure and retention', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: WEEKS_START, days: WEEKS_DAYS, sessions: 120, seed: 21 }, 150);
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        const week = FIRST_WEEK / DAY / 7;
        // A backfill of days in both whole weeks, received later, and a client's retry of stored events.
        const late = generated(projectId, 22, 'late', FIRST_WEEK + 5 * DAY, 4).map((e) => ({ ...e, receivedAt: WEEKS_START + WEEKS_DAYS * DAY + HOUR }));
        await store.write({ events: late, chunks: [] });
        await store.write({ events: generated(projectId, 21, 'g', WEEKS_START, WEEKS_DAYS).slice(0, 60), chunks: [] });
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        // An erasure of a user with events in whole weeks.
        const [user] = await loc.sql('SELECT user_id, COUNT(*) AS n FROM events WHERE project_id = ? AND user_id IS NOT NULL AND timestamp >= ? AND timestamp < ? GROUP BY user_id ORDER BY 2 DESC, 1 LIMIT 1', [
          projectId,
          FIRST_WEEK,
          FIRST_WEEK + 14 * DAY,
        ]);
        expect((await store.deleteUser(projectId, String(user?.user_id))).events).toBeGreaterThan(0);
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        // Retention cuts inside an hour of the first whole week's third day: the week before goes, that week is merged again from its days.
        await store.deleteOlderThan(FIRST_WEEK + 2 * DAY + 9 * HOUR + 50 * 60_000);
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        expect(await loc.sql('SELECT bucket FROM agg_values WHERE project_id = ? AND grain = 2 AND bucket < ?', [projectId, week])).toEqual([]);
        // Then at the second whole week's first midnight: the first week goes whole.
        await store.deleteOlderThan(FIRST_WEEK + 7 * DAY);
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        expect(await loc.sql('SELECT bucket FROM agg_values WHERE project_id = ? AND grain = 2 AND bucket <= ?', [projectId, week])).toEqual([]);
        // What the reports read over a whole week: its week rows (every part of them deleted here,
        // as a store with parts may hold several), not its days; a daily series reads its days.
        const q: ReportQuery = { projectId, from: FIRST_WEEK + 7 * DAY, to: FIRST_WEEK + 14 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const series = await store.reports.series(q, DAY);
        expect((await store.reports.top(q, 'browser', 10)).length).toBeGreaterThan(0);
        await loc.sql("DELETE FROM agg_values WHERE project_id = ? AND dim IN ('', 'browser') AND grain = 2 AND bucket = ?", [projectId, week + 1]);
        expect(await store.reports.top(q, 'browser', 10)).toEqual([]);
        expect((await store.reports.totals(q)).events).toBe(0);
        expect(await store.reports.series(q, DAY)).toEqual(series);
      });
    });

    it('counts late events in their own past hour and day, and re-sent duplicates not at all', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 30, seed: 13 }, 150);
        // A day later, a backfill of the first day: new sessions, received now.
        const late = generated(projectId, 14, 'late', START, 1).map((e) => ({ ...e, receivedAt: START + DAYS * DAY + HOUR }));
        await store.write({ events: late, chunks: [] });
        // A client's retry of events already stored, in small groups and one large.
        const again = generated(projectId, 13, 'g');
        await store.write({ events: again.slice(0, 40), chunks: [] });
        await store.write({ events: again, chunks: [] });
        await expectAsSql(store, loc, projectId);
      });
    });

    it('takes out exactly what an erasure and retention delete, sessions cut in the middle included', async () => {
      await withStore(async (store, loc, projectId) => {
        await writeProject(store, { projectId, start: START, days: DAYS, sessions: 40, seed: 15 }, 150);
        const [user] = await loc.sql('SELECT user_id FROM events WHERE project_id = ? AND user_id IS NOT NULL ORDER BY user_id LIMIT 1', [projectId]);
        expect(user?.user_id).toBeTruthy();
        const erased = await store.deleteUser(projectId, String(user?.user_id));
        expect(erased.events).toBeGreaterThan(0);
        await expectAsSql(store, loc, projectId);
        // Retention cuts inside an hour of the second day: sessions of that hour lose their first events.
        await store.deleteOlderThan(START + DAY + 9 * HOUR + 50 * 60_000);
        await expectAsSql(store, loc, projectId);
      });
    });

    it('counts sessions that span days, mix bots and humans, or straddle a range, through late events, an erasure and retention', async () => {
      await withStore(async (store, loc, projectId) => {
        const model = generated(projectId, 18, 'x', START, 1).find((e) => e.eventType === 'page_view' && !e.isBot) as StoredEvent;
        let id = 0;
        const at = (sessionId: string, timestamp: number, over: Partial<StoredEvent> = {}): StoredEvent => ({
          ...model,
          eventId: `span-${id++}`,
          sessionId,
          timestamp,
          receivedAt: timestamp,
          userId: null,
          isBot: false,
          ...over,
        });
        const MIN = 60_000;
        await store.write({
          events: [
            // Across the first midnight; its second half belongs to a user erased below.
            at('across', START + DAY - 10 * MIN),
            at('across', START + DAY + 5 * MIN, { userId: 'u-span' }),
            at('across', START + DAY + 6 * MIN, { userId: 'u-span', eventType: 'click' }),
            // Wholly inside the second day, until a late event below.
            at('inside', START + DAY + 10 * HOUR),
            at('inside', START + DAY + 10 * HOUR + 20 * MIN, { eventType: 'click' }),
            // A human's events on the second day, a bot's on the third: one day or two, by how reports count.
            at('mixed', START + 2 * DAY - 10 * MIN),
            at('mixed', START + 2 * DAY + 10 * MIN, { isBot: true }),
            // Three days long, one page view a day.
            at('long', START + 12 * HOUR),
            at('long', START + DAY + 12 * HOUR),
            at('long', START + 2 * DAY + 12 * HOUR),
            // A bot's session alone.
            at('bot', START + DAY + 3 * HOUR, { isBot: true }),
            // Forty days long (a clock that was wrong, a bot): no midnight rows, its own index.
            at('forty-days', START - 38 * DAY),
            at('forty-days', START + DAY + 20 * HOUR, { eventType: 'click' }),
            at('forty-days', START + 2 * DAY + 2 * HOUR, { isBot: true }),
            // Nine days long, its last event the erased user's: counted again from its range of hours, not an hour at a time.
            at('nine-days', START - 8 * DAY + 30 * MIN),
            at('nine-days', START - 8 * DAY + 40 * MIN, { eventType: 'click' }),
            at('nine-days', START + 12 * HOUR + 30 * MIN),
            at('nine-days', START + DAY + 4 * HOUR, { userId: 'u-span' }),
          ],
          chunks: [],
        });
        await expectAsSql(store, loc, projectId);
        // A late event takes a session of one day into the next.
        await store.write({ events: [at('inside', START + 2 * DAY + HOUR, { receivedAt: START + 3 * DAY })], chunks: [] });
        await expectAsSql(store, loc, projectId);
        const erased = await store.deleteUser(projectId, 'u-span');
        expect(erased.events).toBe(3);
        // The long session's state, counted again from the hour rows its events left.
        const nine = await loc.sql("SELECT first_ts, last_ts, events FROM agg_session_state WHERE project_id = ? AND session_id = 'nine-days'", [projectId]);
        expect(nine.map((row) => [Number(row.first_ts), Number(row.last_ts), Number(row.events)])).toEqual([[START - 8 * DAY + 30 * MIN, START + 12 * HOUR + 30 * MIN, 3]]);
        await expectAsSql(store, loc, projectId);
        await store.deleteOlderThan(START + DAY + 12 * HOUR + 30 * MIN);
        await expectAsSql(store, loc, projectId);
      });
    });

    it('answers the errors report: the latest error of each message at either end of a range, errors without a message, ties, bots, after an erasure and retention', async () => {
      await withStore(async (store, loc, projectId) => {
        const model = generated(projectId, 20, 'y', START, 1).find((e) => e.eventType === 'page_view' && !e.isBot) as StoredEvent;
        let id = 0;
        const error = (timestamp: number, properties: StoredEvent['properties'], over: Partial<StoredEvent> = {}): StoredEvent => ({
          ...model,
          eventId: `err-${String(id++).padStart(3, '0')}`,
          eventType: 'error',
          sessionId: `es-${id % 3}`,
          timestamp,
          receivedAt: timestamp,
          userId: null,
          isBot: false,
          properties,
          ...over,
        });
        const MIN = 60_000;
        // 'ends inside hours' runs from START + 5 h 17 min to START + 1 day 7 h 3 min (RANGES).
        await store.write({
          events: [
            error(START + 5 * HOUR + 18 * MIN, { message: 'A', stack: 'A at start' }),
            error(START + 5 * HOUR + 19 * MIN, { message: 'B', stack: 'B at start' }),
            error(START + 5 * HOUR + 20 * MIN, { message: 'B', stack: 'B later at start' }),
            error(START + DAY + 3 * HOUR, { message: 'A', stack: 'A inside' }),
            error(START + (DAYS - 1) * DAY + 7 * HOUR + MIN, { message: 'A', stack: 'A at the end' }, { userId: 'u-err' }),
            error(START + (DAYS - 1) * DAY + 7 * HOUR + 2 * MIN, { message: 'A', stack: 'A by a bot' }, { isBot: true }),
            error(START + DAY + 9 * HOUR, { stack: 'no message' }),
            error(START + DAY + 9 * HOUR, { stack: 'no message, same time' }),
            error(START + DAY + 11 * HOUR, { message: 'C' }),
            error(START + DAY + 11 * HOUR, { message: 'D', stack: 'D' }),
          ],
          chunks: [],
        });
        await expectAsSql(store, loc, projectId);
        await store.deleteUser(projectId, 'u-err');
        await expectAsSql(store, loc, projectId);
        await store.deleteOlderThan(START + 5 * HOUR + 19 * MIN + 30_000);
        await expectAsSql(store, loc, projectId);
      });
    });

    it('builds the session summaries of a database whose aggregates came before them, from its session rows', async () => {
      const loc = await location();
      const projectId = newProjectId();
      const first = loc.open();
      await first.init();
      await writeProject(first, { projectId, start: START, days: DAYS, sessions: 30, seed: 19 }, 150);
      await first.close();
      for (const table of ['agg_session_state', 'agg_session_days']) await loc.sql(`DROP TABLE IF EXISTS ${table}`);
      const store = loc.open();
      await store.init();
      try {
        await expectAsSql(store, loc, projectId);
      } finally {
        await store.close();
      }
    });

    it('sums the sessions of a database of aggregate shape 5 per first and last day, and their midnights, from its session states', async () => {
      const loc = await location();
      const projectId = newProjectId();
      const first = loc.open();
      await first.init();
      await writeProject(first, { projectId, start: START, days: DAYS, sessions: 30, seed: 20 }, 150);
      // Sessions across one midnight and across two, which the sums of shape 5 left out.
      const model = generated(projectId, 20, 'x', START, 1).find((e) => e.eventType === 'page_view' && !e.isBot) as StoredEvent;
      const at = (sessionId: string, timestamp: number, eventId: string): StoredEvent => ({ ...model, eventId, sessionId, timestamp, receivedAt: timestamp, userId: null });
      await first.write({
        events: [
          at('one-midnight', START + DAY - HOUR, 'm1'),
          at('one-midnight', START + DAY + HOUR, 'm2'),
          at('two-midnights', START + 12 * HOUR, 'm3'),
          at('two-midnights', START + 2 * DAY + 12 * HOUR, 'm4'),
        ],
        chunks: [],
      });
      await first.close();
      // Shape 5's day sums: the sessions wholly inside one day, without the last day in the key.
      await loc.sql('DROP TABLE agg_session_midnights');
      await loc.sql('CREATE TABLE shape5_days AS SELECT project_id, day, with_bots, sessions, bounces, duration, page_views FROM agg_session_days WHERE day = last_day');
      await loc.sql('DROP TABLE agg_session_days');
      await loc.sql('ALTER TABLE shape5_days RENAME TO agg_session_days');
      await loc.sql('UPDATE agg_meta SET shape = 5');
      const store = loc.open();
      await store.init();
      try {
        await expectAsSql(store, loc, projectId);
        expect((await loc.sql('SELECT shape FROM agg_meta'))[0]?.shape).toBe(AGGREGATE_SHAPE);
        const midnights = await loc.sql(
          "SELECT day, session_id FROM agg_session_midnights WHERE project_id = ? AND session_id IN ('one-midnight', 'two-midnights') ORDER BY day, session_id",
          [projectId],
        );
        const firstDay = START / DAY;
        expect(midnights.map((row) => [n(row.day), String(row.session_id)])).toEqual([
          [firstDay + 1, 'one-midnight'],
          [firstDay + 1, 'two-midnights'],
          [firstDay + 2, 'two-midnights'],
        ]);
      } finally {
        await store.close();
      }
    });

    it('builds the aggregates of a database that had none (an upgrade) from its events, once, at open, week rows included', async () => {
      const loc = await location();
      const projectId = newProjectId();
      const first = loc.open();
      await first.init();
      await writeProject(first, { projectId, start: WEEKS_START, days: WEEKS_DAYS, sessions: 80, seed: 16 }, 150);
      await first.close();
      for (const table of ['agg_values', 'agg_sessions', 'agg_meta']) await loc.sql(`DROP TABLE ${table}`);
      const store = loc.open();
      await store.init();
      try {
        await expectAsSql(store, loc, projectId, [...RANGES, ...WEEK_RANGES]);
      } finally {
        await store.close();
      }
    });

    it('adds the estimate columns to aggregates from before them, at open, and keeps estimates from then on', async () => {
      const loc = await location();
      const projectId = newProjectId();
      const first = loc.open();
      await first.init();
      await writeProject(first, { projectId, start: START, days: DAYS, sessions: 20, seed: 19 }, 150);
      await first.close();
      // SQLite's trigger names the columns; PostgreSQL has none (its statement for it fails and is passed over).
      await loc.sql('DROP TRIGGER IF EXISTS agg_values_estimates_stale').catch(() => undefined);
      for (const column of ['visitors_estimate', 'visitor_hashes_estimate', 'sessions_estimate']) await loc.sql(`ALTER TABLE agg_values DROP COLUMN ${column}`);
      const store = loc.open();
      await store.init();
      try {
        await expectAsSql(store, loc, projectId);
        const kept = await loc.sql("SELECT COUNT(*) AS n FROM agg_values WHERE project_id = ? AND dim = '' AND grain = 0 AND sessions_estimate IS NOT NULL", [projectId]);
        expect(n(kept[0]?.n)).toBeGreaterThan(0);
        // What keeps them true is there too (on SQLite, the trigger): a late event in kept hours and days shows.
        const late = generated(projectId, 20, 'late', START, 1).map((e) => ({ ...e, receivedAt: START + DAYS * DAY }));
        await store.write({ events: late, chunks: [] });
        await expectAsSql(store, loc, projectId);
      } finally {
        await store.close();
      }
    });

    it('merges the week rows of a database whose aggregates came before them from its day rows, not from its events', async () => {
      const loc = await location();
      const [projectId, changed] = [newProjectId(), newProjectId()];
      const first = loc.open();
      await first.init();
      await writeProject(first, { projectId, start: WEEKS_START, days: WEEKS_DAYS, sessions: 80, seed: 23 }, 150);
      await writeProject(first, { projectId: changed, start: WEEKS_START, days: WEEKS_DAYS, sessions: 80, seed: 24 }, 150);
      await first.close();
      // Shape 4, with the week rows a process of this version wrote still there: the conversion
      // merges them again rather than adding to them.
      await loc.sql('UPDATE agg_meta SET shape = 4');
      // One day's rows of every event gone from the other project: merged from the day rows, its
      // week lacks them; built from the events, it would not.
      const day = FIRST_WEEK / DAY + 3;
      await loc.sql("DELETE FROM agg_values WHERE project_id = ? AND dim = '' AND grain = 1 AND bucket = ?", [changed, day]);
      const store = loc.open();
      await store.init();
      try {
        await expectAsSql(store, loc, projectId, WEEK_RANGES);
        const q = (from: number, to: number): ReportQuery => ({ projectId: changed, from, to, filters: {}, includeBots: false, visitorKey: 'anonymous' });
        const events = async (from: number, to: number) => n((await sqlTotals(loc, q(from, to)))[0]?.events);
        const weeks = q(FIRST_WEEK, FIRST_WEEK + 14 * DAY);
        expect((await store.reports.totals(weeks)).events).toBe((await events(FIRST_WEEK, FIRST_WEEK + 14 * DAY)) - (await events(day * DAY, (day + 1) * DAY)));
        expect(await events(day * DAY, (day + 1) * DAY)).toBeGreaterThan(0);
        expect((await loc.sql('SELECT shape FROM agg_meta'))[0]?.shape).toBe(AGGREGATE_SHAPE);
      } finally {
        await store.close();
      }
    });

    it('estimates unique visitors past the exact threshold within the documented bound', async () => {
      await withStore(async (store, loc, projectId) => {
        const model = generated(projectId, 17, 'm', START, 1).find((e) => e.eventType === 'page_view' && !e.isBot) as StoredEvent;
        const events: StoredEvent[] = [];
        for (let i = 0; i < 4000; i++) {
          events.push({
            ...model,
            eventId: `big-${i}`,
            sessionId: `s-${i}`,
            visitorId: `h-${i % 3000}`,
            timestamp: START + (i % 48) * HOUR + i,
            dimensions: { ...(model.dimensions as NonNullable<StoredEvent['dimensions']>), anonymousId: `a-${i % 3000}` },
          });
        }
        for (let i = 0; i < events.length; i += 500) await store.write({ events: events.slice(i, i + 500), chunks: [] });
        const q: ReportQuery = { projectId, from: START + 30 * 60_000, to: START + 2 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const [row] = await sqlTotals(loc, q);
        expect(n(row?.visitors)).toBeGreaterThan(2000);
        expectTotals(await store.reports.totals(q), row, 'past the threshold');
      });
    });
  });
}
