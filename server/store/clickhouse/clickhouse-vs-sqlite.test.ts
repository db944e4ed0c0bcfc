import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { chdbStore } from '../../../test-support/store/clickhouse-chdb.js';
import { compareAnswers } from '../../../test-support/store/estimate-bound.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { SKETCH_P99_RELATIVE_ERROR } from '../aggregates/visitor-sketch.js';
import type { EventRow, EventStore, StoredEvent } from '../event-store.js';
import { type ReportQuery, TOP_DIMENSIONS } from '../report-store.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

/*
 * The ClickHouse store answers what the SQLite store answers on the same generated project
 * (issue: "the numbers agree with SQLite's on the same generated fixtures"): every panel, over
 * whole days and partial ones, with filters, the hash visitor key and bots, and again after late
 * events, re-sent duplicates, an erasure and retention. Exact counts must be equal; unique counts
 * within the sketches' documented bound (they are equal at these sizes, under both stores' exact
 * thresholds, so the bound is a margin, not an allowance that hides a wrong count).
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 2);
const DAYS = 4;

const dir = mkdtempSync(join(tmpdir(), 'clickhouse-vs-sqlite-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every report of the dashboard, as the routes ask for them. */
async function panels(store: EventStore, projectId: string): Promise<Record<string, unknown>> {
  const r = store.reports;
  const out: Record<string, unknown> = {};
  for (const [name, from, to] of [
    ['whole days', START, START + DAYS * DAY],
    ['partial ends', START + 5 * HOUR + 17 * 60_000, START + (DAYS - 1) * DAY + 7 * HOUR],
  ] as const) {
    const q = (over: Partial<ReportQuery> = {}): ReportQuery => ({ projectId, from, to, filters: {}, includeBots: false, visitorKey: 'anonymous', ...over });
    out[name] = {
      totals: await r.totals(q()),
      totalsHash: await r.totals(q({ visitorKey: 'hash' })),
      totalsBots: await r.totals(q({ includeBots: true })),
      totalsTwoFilters: await r.totals(q({ filters: { browser: 'Chrome', device: 'desktop' } })),
      seriesDay: await r.series(q(), DAY),
      seriesHour: await r.series(q({ filters: { page: '/pricing' } }), HOUR),
      // The live view: the last minutes, per minute.
      live: await r.series(q({ from: to - 30 * 60_000 }), 60_000),
      sessions: await r.sessions(q()),
      sessionsFiltered: await r.sessions(q({ filters: { channel: 'Direct' } })),
      top: await Promise.all(TOP_DIMENSIONS.map((d) => r.top(q(), d, 10))),
      topHashBots: await r.top(q({ visitorKey: 'hash', includeBots: true }), 'page', 3),
      topFiltered: await r.top(q({ filters: { device: 'mobile' } }), 'page', 10),
      vitals: await r.vitals(q(), 10),
      errors: await r.errors(q(), 10),
      errorsHash: await r.errors(q({ visitorKey: 'hash' }), 2),
      funnel: await r.funnel(q(), [
        { kind: 'page', value: '/' },
        { kind: 'page', value: '/signup' },
        { kind: 'event', value: 'signup_started' },
      ]),
      funnelRepeated: await r.funnel(q({ includeBots: true }), [
        { kind: 'event', value: 'page_view' },
        { kind: 'page', value: '/pricing' },
        { kind: 'page', value: '/pricing' },
        { kind: 'event', value: 'purchase' },
      ]),
      experiments: await r.experiments(q(), 10),
      experiment: await r.experiment(q(), 'checkout-button', 'purchase'),
      exposures: await r.experiment(q({ visitorKey: 'hash' }), 'checkout-button', null),
    };
  }
  return out;
}

/** The whole export of a project, page by page. */
async function exportAll(store: EventStore, projectId: string): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  let after: { timestamp: number; eventId: string } | undefined;
  for (;;) {
    const page = await store.exportEvents({ projectId, limit: 500, ...(after ? { after } : {}) });
    rows.push(...page);
    const last = page[page.length - 1];
    if (page.length < 500 || last === undefined) return rows;
    after = { timestamp: last.timestamp, eventId: last.eventId };
  }
}

describe('clickhouse: the same answers as sqlite on a generated project', () => {
  let sqlite: EventStore;
  let clickhouse: EventStore;
  const projectId = newProjectId();

  beforeEach(async () => {
    sqlite = createSqliteStore({ path: join(dir, `${++files}.db`) });
    clickhouse = chdbStore();
    await Promise.all([sqlite.init(), clickhouse.init()]);
  });
  afterEach(async () => {
    await Promise.all([sqlite.close(), clickhouse.close()]);
  });

  const both = async <T>(work: (store: EventStore) => Promise<T>): Promise<[T, T]> => [await work(sqlite), await work(clickhouse)];
  const writeBoth = async (events: readonly StoredEvent[]) => {
    for (let i = 0; i < events.length; i += 300) {
      const batch = { events: events.slice(i, i + 300), chunks: [] };
      const [a, b] = await both((store) => store.write(batch));
      expect(b).toEqual(a);
    }
  };
  const expectSameAnswers = async (what: string) => {
    const [expected, actual] = await both((store) => panels(store, projectId));
    const comparison = compareAnswers(actual, expected);
    if (!comparison.exactEqual) expect(actual, what).toEqual(expected);
    expect(comparison.worstEstimateError, what).toBeLessThanOrEqual(SKETCH_P99_RELATIVE_ERROR);
    const [sqliteRows, clickhouseRows] = await both((store) => exportAll(store, projectId));
    expect(clickhouseRows, `${what}: export`).toEqual(sqliteRows);
  };

  it('answers every panel as sqlite does, through late events, duplicates, an erasure and retention', async () => {
    const events = [...generateProject({ projectId, start: START, days: DAYS, sessions: 150, seed: 21 })];
    await writeBoth(events);
    await expectSameAnswers('written');
    const [sqliteTotals] = await both((store) => store.reports.totals({ projectId, from: START, to: START + DAYS * DAY, filters: {}, includeBots: true, visitorKey: 'anonymous' }));
    expect(sqliteTotals.events).toBeGreaterThan(800);

    // Late events into days already reported, and a client's retry of events already stored.
    await writeBoth([...generateProject({ projectId, start: START, days: 2, sessions: 40, seed: 22, idPrefix: 'late' })]);
    await writeBoth(events.slice(0, 500));
    await expectSameAnswers('late events and duplicates');

    const user = events.find((e) => e.userId !== null && !e.isBot)?.userId as string;
    const [erasedSqlite, erasedClickhouse] = await both((store) => store.deleteUser(projectId, user));
    expect(erasedSqlite.events).toBeGreaterThan(0);
    expect(erasedClickhouse).toEqual(erasedSqlite);
    await expectSameAnswers('erasure');

    const [cutSqlite, cutClickhouse] = await both((store) => store.deleteOlderThan(START + DAY + 9 * HOUR + 50 * 60_000));
    expect(cutSqlite.events).toBeGreaterThan(0);
    expect(cutClickhouse).toEqual(cutSqlite);
    await expectSameAnswers('retention');
  });

  it('estimates unique visitors past the exact threshold within the documented bound', async () => {
    const model = [...generateProject({ projectId, start: START, days: 1, sessions: 5, seed: 23 })].find((e) => e.eventType === 'page_view' && !e.isBot) as StoredEvent;
    const events: StoredEvent[] = Array.from({ length: 4000 }, (_, i) => ({
      ...model,
      eventId: `big-${i}`,
      sessionId: `s-${i}`,
      visitorId: `h-${i % 3000}`,
      timestamp: START + (i % 48) * HOUR + i,
      dimensions: { ...(model.dimensions as NonNullable<StoredEvent['dimensions']>), anonymousId: `a-${i % 3000}` },
    }));
    await clickhouse.write({ events, chunks: [] });
    const q: ReportQuery = { projectId, from: START + 30 * 60_000, to: START + 2 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
    const expected = new Set(events.filter((e) => e.timestamp >= q.from && e.timestamp < q.to).map((e) => e.dimensions?.anonymousId));
    const totals = await clickhouse.reports.totals(q);
    expect(expected.size).toBeGreaterThan(2000);
    expect(Math.abs(totals.visitors - expected.size)).toBeLessThanOrEqual(expected.size * SKETCH_P99_RELATIVE_ERROR);
  });
});
