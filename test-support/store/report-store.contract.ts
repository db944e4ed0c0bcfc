import { describe, expect, it } from 'vitest';
import { useStore, type MakeStore } from './event-store.contract-support.js';
import type { EventDimensions, StoredEvent } from '../../server/store/event-store.js';
import { NO_DIMENSIONS, T0 as UNALIGNED_T0, makeEvent } from './event-store.fixtures.js';
import { FRUSTRATION_SESSION_IDS, type FrustrationRow, type ReportQuery } from '../../server/store/report-store.js';
import { expectedFrustration, frustrationFixture } from './frustration-fixture.js';
import { expectedHeatmap, heatmapFixture } from './heatmap-fixture.js';

/*
 * The rules of the reports (`report-store.ts`) on hand-made rows, run against every store: edge
 * cases that generated data rarely hits (ties, repeats, empty ranges, bots, the visitor key). The
 * counts over a realistic project are checked over HTTP in `routes/reports.test.ts`.
 *
 * It runs twice: on the events (the range does not start at a UTC midnight, so no whole day is in
 * it) and on the daily rollups (the range is one whole UTC day, refreshed after every write), with
 * the same rows and the same expected numbers.
 */

const DAY_MS = 86_400_000;


/** Runs the report contract against a store, from the events and from the daily rollups. */
export function describeReportStore(name: string, makeStore: MakeStore): void {
  describeReports(`${name}: reports from the events`, makeStore, UNALIGNED_T0, false);
  describeReports(`${name}: reports from the daily rollups`, makeStore, Math.ceil(UNALIGNED_T0 / DAY_MS) * DAY_MS, true);
}

function describeReports(title: string, makeStore: MakeStore, T0: number, rollups: boolean): void {
  describe(title, () => {
    const ctx = useStore(makeStore);
    let n = 0;
    const event = (overrides: Partial<StoredEvent> & { d?: Partial<EventDimensions> }): StoredEvent => {
      const { d, ...rest } = overrides;
      return makeEvent(ctx.projectId, ++n, { properties: {}, visitorId: null, ...rest, dimensions: { ...NO_DIMENSIONS, ...d } });
    };
    const query = (overrides: Partial<ReportQuery> = {}): ReportQuery => ({
      projectId: ctx.projectId,
      from: T0,
      to: T0 + 86_400_000,
      filters: {},
      includeBots: false,
      visitorKey: 'anonymous',
      ...overrides,
    });
    const write = async (events: StoredEvent[]) => {
      await ctx.store.write({ events, chunks: [] });
      if (rollups) await ctx.store.reports.refreshRollups();
    };

    it('answers zeros and empty lists for a project without events', async () => {
      const r = ctx.store.reports;
      const q = query();
      expect(await r.totals(q)).toEqual({ events: 0, pageViews: 0, visitors: 0, sessions: 0 });
      expect(await r.series(q, 3_600_000)).toEqual([]);
      expect(await r.top(q, 'page', 10)).toEqual([]);
      expect(await r.sessions(q)).toEqual({ sessions: 0, bounces: 0, totalDurationMs: 0, pageViews: 0 });
      expect(await r.vitals(q, 10)).toEqual([]);
      expect(await r.errors(q, 10)).toEqual([]);
      expect(await r.funnel(q, [{ kind: 'event', value: 'a' }, { kind: 'event', value: 'b' }])).toEqual([0, 0]);
      expect(await r.experiment(q, 'x', 'buy')).toEqual([]);
      expect(await r.experiments(q, 10)).toEqual([]);
      expect(await r.heatmap(query({ filters: { page: '/' } }), 10)).toEqual({ clicks: 0, elements: [], pageViews: 0, reached: Array(10).fill(0) });
    });

    it('counts visitors by anonymous id, else the daily hash; by the hash alone on request; leaves bots out unless asked', async () => {
      await write([
        event({ timestamp: T0 + 1, visitorId: 'h1', d: { anonymousId: 'a1' } }),
        event({ timestamp: T0 + 2, visitorId: 'h1', d: { anonymousId: 'a2' } }),
        event({ timestamp: T0 + 3, visitorId: 'h2' }),
        event({ timestamp: T0 + 4, visitorId: null }),
        event({ timestamp: T0 + 5, visitorId: 'hb', isBot: true, d: { anonymousId: 'bot' } }),
      ]);
      expect((await ctx.store.reports.totals(query())).visitors).toBe(3);
      expect((await ctx.store.reports.totals(query({ visitorKey: 'hash' }))).visitors).toBe(2);
      expect(await ctx.store.reports.totals(query({ includeBots: true }))).toMatchObject({ events: 5, visitors: 4 });
    });

    it('keeps the range half-open and every filter, combined', async () => {
      await write([
        event({ eventType: 'page_view', timestamp: T0, d: { path: '/a', browser: 'Firefox' } }),
        event({ eventType: 'page_view', timestamp: T0 + 10, d: { path: '/a', browser: 'Chrome' } }),
        event({ eventType: 'page_view', timestamp: T0 + 20, d: { path: '/b', browser: 'Firefox' } }),
        event({ eventType: 'page_view', timestamp: T0 + 86_400_000, d: { path: '/a', browser: 'Firefox' } }),
      ]);
      expect((await ctx.store.reports.totals(query())).events).toBe(3);
      expect((await ctx.store.reports.totals(query({ filters: { page: '/a', browser: 'Firefox' } }))).events).toBe(1);
      expect(await ctx.store.reports.top(query({ filters: { browser: 'Firefox' } }), 'page', 10)).toEqual([
        // Neither id: an event counts in no visitor.
        { value: '/a', events: 1, visitors: 0 },
        { value: '/b', events: 1, visitors: 0 },
      ]);
    });

    it('ranks and filters by country as it does by browser: its top list counts page views', async () => {
      await write([
        event({ eventType: 'page_view', timestamp: T0 + 1, d: { country: 'GB', path: '/a', anonymousId: 'a1' } }),
        event({ eventType: 'page_view', timestamp: T0 + 2, d: { country: 'GB', path: '/b', anonymousId: 'a1' } }),
        event({ eventType: 'click', timestamp: T0 + 3, d: { country: 'GB', path: '/b', anonymousId: 'a1' } }),
        event({ eventType: 'page_view', timestamp: T0 + 4, d: { country: 'US', path: '/a', anonymousId: 'a2' } }),
        event({ eventType: 'page_view', timestamp: T0 + 5, d: { country: 'US', path: '/a', anonymousId: 'a3' } }),
        // No country (a private address, or stored before there were countries): in no row of the list.
        event({ eventType: 'page_view', timestamp: T0 + 6, d: { path: '/a', anonymousId: 'a4' } }),
      ]);
      const r = ctx.store.reports;
      expect(await r.top(query(), 'country', 10)).toEqual([
        { value: 'GB', events: 2, visitors: 1 },
        { value: 'US', events: 2, visitors: 2 },
      ]);
      expect(await r.totals(query({ filters: { country: 'GB' } }))).toMatchObject({ events: 3, pageViews: 2, visitors: 1 });
      expect(await r.top(query({ filters: { country: 'US' } }), 'page', 10)).toEqual([{ value: '/a', events: 2, visitors: 2 }]);
      expect(await r.top(query({ filters: { page: '/a' } }), 'country', 10)).toEqual([
        { value: 'US', events: 2, visitors: 2 },
        { value: 'GB', events: 1, visitors: 1 },
      ]);
    });

    it('counts a session with no page view or one as a bounce, one with two as none', async () => {
      await write([
        // s0: no page view at all, only a custom event (a session of a single-page app's action).
        event({ sessionId: 's0', eventType: 'signup', timestamp: T0 + 1 }),
        // s1: one page view and a click 10 ms later.
        event({ sessionId: 's1', eventType: 'page_view', timestamp: T0 + 2, d: { path: '/a' } }),
        event({ sessionId: 's1', eventType: 'click', timestamp: T0 + 12, d: { path: '/a' } }),
        // s2: two page views 30 ms apart.
        event({ sessionId: 's2', eventType: 'page_view', timestamp: T0 + 3, d: { path: '/a' } }),
        event({ sessionId: 's2', eventType: 'page_view', timestamp: T0 + 33, d: { path: '/b' } }),
      ]);
      expect(await ctx.store.reports.sessions(query())).toEqual({ sessions: 3, bounces: 2, totalDurationMs: 40, pageViews: 3 });
    });

    it('puts each event in the UTC bucket of its own time, whatever the range starts at', async () => {
      const HOUR = 3_600_000;
      // Half past an hour into the range, and 25 hours later: an unaligned `from` must not move them.
      const first = T0 + 1_800_000;
      const later = T0 + 90_000_000;
      await write([event({ eventType: 'page_view', timestamp: first }), event({ eventType: 'page_view', timestamp: later })]);
      const range = query({ to: T0 + 2 * DAY_MS });
      const hourly = await ctx.store.reports.series(range, HOUR);
      expect(hourly.map((p) => [p.time, p.events])).toEqual([
        [Math.floor(first / HOUR) * HOUR, 1],
        [Math.floor(later / HOUR) * HOUR, 1],
      ]);
      const daily = await ctx.store.reports.series(range, DAY_MS);
      expect(daily.map((p) => [p.time, p.events])).toEqual(
        Math.floor(first / DAY_MS) === Math.floor(later / DAY_MS)
          ? [[Math.floor(first / DAY_MS) * DAY_MS, 2]]
          : [
              [Math.floor(first / DAY_MS) * DAY_MS, 1],
              [Math.floor(later / DAY_MS) * DAY_MS, 1],
            ],
      );
    });

    it('reaches a funnel step only with a later event, ties broken by event id, a repeated step needing a second event', async () => {
      await write([
        // Session 1: a and b at the same millisecond, b's id after a's: both steps.
        event({ sessionId: 's1', eventType: 'a', timestamp: T0 + 100 }),
        event({ sessionId: 's1', eventType: 'b', timestamp: T0 + 100 }),
        // Session 2: b before a: only step 1.
        event({ sessionId: 's2', eventType: 'b', timestamp: T0 + 100 }),
        event({ sessionId: 's2', eventType: 'a', timestamp: T0 + 200 }),
        // Session 3: a once: a → a reaches step 1 only; session 1 has a once too.
        event({ sessionId: 's3', eventType: 'a', timestamp: T0 + 100 }),
        event({ sessionId: 's3', eventType: 'a', timestamp: T0 + 300 }),
        // A page step matches page views of that path only.
        event({ sessionId: 's3', eventType: 'page_view', timestamp: T0 + 400, d: { path: '/done' } }),
        event({ sessionId: 's2', eventType: 'click', timestamp: T0 + 500, d: { path: '/done' } }),
      ]);
      const r = ctx.store.reports;
      expect(await r.funnel(query(), [{ kind: 'event', value: 'a' }, { kind: 'event', value: 'b' }])).toEqual([3, 1]);
      expect(await r.funnel(query(), [{ kind: 'event', value: 'a' }, { kind: 'event', value: 'a' }, { kind: 'page', value: '/done' }])).toEqual([3, 1, 1]);
    });

    it('takes the nearest-rank p75 of the numeric samples of each vital', async () => {
      const perf = (path: string, lcp: number | string, extra: Record<string, number> = {}) =>
        event({ eventType: 'performance', timestamp: T0 + ++n, properties: { largestContentfulPaint: lcp, ...extra }, d: { path } });
      await write([perf('/x', 4), perf('/x', 1), perf('/x', 3), perf('/x', 2, { cumulativeLayoutShift: 0.25 }), perf('/y', 10), perf('/y', 'slow')]);
      expect(await ctx.store.reports.vitals(query(), 10)).toEqual([
        { path: '/x', samples: 4, lcp: 3, inp: null, cls: 0.25, fcp: null },
        { path: '/y', samples: 2, lcp: 10, inp: null, cls: null, fcp: null },
      ]);
    });

    it('rounds each vital at its third significant digit to a step of 5 before taking the p75', async () => {
      const perf = (lcp: number, cls: number) =>
        event({ eventType: 'performance', timestamp: T0 + ++n, properties: { largestContentfulPaint: lcp, cumulativeLayoutShift: cls }, d: { path: '/r' } });
      // Ranks: the 3rd of 4 is 1276 (rounded 1300) and 0.0613 (rounded 0.0615).
      await write([perf(1234, 0.0613), perf(1249, 0.001), perf(1276, 0.0001), perf(2490, 0.3)]);
      expect(await ctx.store.reports.vitals(query(), 10)).toEqual([{ path: '/r', samples: 4, lcp: 1300, inp: null, cls: 0.0615, fcp: null }]);
    });

    it('groups errors by message, the latest stack winning', async () => {
      await write([
        event({ eventType: 'error', timestamp: T0 + 1, properties: { message: 'boom', stack: 'old' } }),
        event({ eventType: 'error', timestamp: T0 + 3, properties: { message: 'boom', stack: 'new' } }),
        event({ eventType: 'error', timestamp: T0 + 2, properties: { message: 'other' } }),
        event({ eventType: 'error', timestamp: T0 + 2, properties: {} }),
      ]);
      const groups = await ctx.store.reports.errors(query(), 10);
      expect(groups.map((g) => [g.message, g.count, g.lastSeen, g.lastStack])).toEqual([
        ['boom', 2, T0 + 3, 'new'],
        ['', 1, T0 + 2, null],
        ['other', 1, T0 + 2, null],
      ]);
    });

    it('counts a conversion only at or after the visitor\'s first exposure to the variant', async () => {
      const exposure = (visitor: string, variant: string, t: number) =>
        event({ eventType: 'experiment_exposure', timestamp: T0 + t, properties: { experiment: 'e', variant }, d: { anonymousId: visitor } });
      const buy = (visitor: string, t: number) => event({ eventType: 'buy', timestamp: T0 + t, d: { anonymousId: visitor } });
      await write([exposure('v1', 'a', 10), buy('v1', 5), exposure('v2', 'a', 10), buy('v2', 10), exposure('v3', 'b', 10), exposure('v3', 'b', 20), buy('v3', 30)]);
      expect(await ctx.store.reports.experiment(query(), 'e', 'buy')).toEqual([
        { variant: 'a', exposures: 2, conversions: 1 },
        { variant: 'b', exposures: 1, conversions: 1 },
      ]);
    });

    it('lists the experiments by exposed visitors, then by name in byte order, at most limit', async () => {
      const exposure = (experiment: string | null, visitor: string, t: number) =>
        event({ eventType: 'experiment_exposure', timestamp: T0 + t, properties: { experiment, variant: 'a' }, d: { anonymousId: visitor } });
      await write([
        exposure('b', 'v1', 1),
        exposure('b', 'v1', 2),
        exposure('b', 'v2', 3),
        exposure('a', 'v3', 4),
        exposure('B', 'v4', 5),
        exposure('', 'v5', 6),
        exposure(null, 'v6', 7),
        event({ eventType: 'buy', timestamp: T0 + 8, properties: { experiment: 'not-an-exposure' } }),
      ]);
      expect(await ctx.store.reports.experiments(query(), 10)).toEqual([
        { experiment: 'b', visitors: 2 },
        { experiment: 'B', visitors: 1 },
        { experiment: 'a', visitors: 1 },
      ]);
      expect(await ctx.store.reports.experiments(query(), 1)).toEqual([{ experiment: 'b', visitors: 2 }]);
    });

    it('lists the elements of each frustration signal by events, ties by selector and page in byte order, with their latest sessions', async () => {
      const signal = (eventType: string, selector: string | null, path: string | null, session: string | null, t: number, isBot = false) =>
        event({ eventType, timestamp: T0 + t, sessionId: session, isBot, properties: selector === null ? {} : { selector }, d: { path } });
      await write([
        signal('rage_click', '#pay', '/cart', 's1', 1),
        signal('rage_click', '#pay', '/cart', 's2', 5),
        signal('rage_click', '#pay', '/cart', 's1', 2),
        signal('rage_click', '#pay', '/cart', 's3', 5),
        signal('rage_click', 'B', '/cart', 's1', 3),
        signal('rage_click', 'a', '/cart', 's1', 3),
        signal('rage_click', '#pay', '/other', null, 4),
        signal('dead_click', null, null, 's9', 6),
        signal('dead_click', '#x', '/cart', 's9', 7, true),
        signal('error_click', '#save', '/cart', 's4', -5),
        signal('click', '#pay', '/cart', 's5', 8),
      ]);
      const rows = await ctx.store.reports.frustration(query(), 10);
      expect(rows).toEqual<FrustrationRow[]>([
        { signal: 'dead_click', selector: '', path: '', count: 1, sessions: 1, sessionIds: ['s9'] },
        { signal: 'rage_click', selector: '#pay', path: '/cart', count: 4, sessions: 3, sessionIds: ['s2', 's3', 's1'] },
        { signal: 'rage_click', selector: '#pay', path: '/other', count: 1, sessions: 0, sessionIds: [] },
        { signal: 'rage_click', selector: 'B', path: '/cart', count: 1, sessions: 1, sessionIds: ['s1'] },
        { signal: 'rage_click', selector: 'a', path: '/cart', count: 1, sessions: 1, sessionIds: ['s1'] },
      ]);
      expect((await ctx.store.reports.frustration(query(), 1)).map((r) => [r.signal, r.selector, r.path])).toEqual([
        ['dead_click', '', ''],
        ['rage_click', '#pay', '/cart'],
      ]);
      expect((await ctx.store.reports.frustration(query({ includeBots: true, filters: { page: '/cart' } }), 10)).map((r) => [r.signal, r.selector, r.count])).toEqual([
        ['dead_click', '#x', 1],
        ['rage_click', '#pay', 4],
        ['rage_click', 'B', 1],
        ['rage_click', 'a', 1],
      ]);
    });

    it('counts the frustration signals of generated events as a direct count of the same rows does, over every range, filter and limit', async () => {
      const fixture = frustrationFixture(ctx.projectId, T0, 1000, 20260101);
      await write(fixture);
      const ranges = [
        { from: T0, to: T0 + DAY_MS },
        { from: T0 + 3_600_000, to: T0 + 5 * 3_600_000 },
      ];
      for (const range of ranges) {
        for (const filters of [{}, { page: '/cart' }, { browser: 'Firefox' }]) {
          for (const includeBots of [false, true]) {
            for (const limit of [1, 3, 100]) {
              const q = query({ ...range, filters, includeBots });
              const label = JSON.stringify({ range, filters, includeBots, limit });
              expect(await ctx.store.reports.frustration(q, limit), label).toEqual(expectedFrustration(fixture, q, limit, FRUSTRATION_SESSION_IDS));
            }
          }
        }
      }
    });
    it('counts one page\'s clicks by element and cell of its box, and its page views by scroll depth', async () => {
      const click = (selector: string | null, x: unknown, y: unknown, t: number, path: string | null = '/a', isBot = false) =>
        event({
          eventType: 'click',
          timestamp: T0 + t,
          isBot,
          properties: { ...(selector === null ? {} : { selector }), ...(x === undefined ? {} : { relativeX: x as number, relativeY: y as number }) },
          d: { path },
        });
      const depth = (value: unknown, t: number, path: string | null = '/a') =>
        event({ eventType: 'scroll_depth', timestamp: T0 + t, properties: value === undefined ? {} : { maxScrollDepth: value as number }, d: { path } });
      await write([
        click('#buy', 0, 0, 1),
        click('#buy', 0.099, 0.05, 2),
        click('#buy', 0.1, 0.05, 3),
        click('#buy', 1, 1, 4),
        click('#buy', 0.9996, 0.95, 5),
        click('#buy', 1.2, 0.5, 6),
        click('#buy', '0.5', 0.5, 7),
        click('#buy', undefined, undefined, 8),
        click('a', 0.5, 0.5, 9),
        click(null, 0.5, 0.5, 10),
        click('a', 0.5, 0.5, 11),
        click('#buy', 0.5, 0.5, 12, '/b'),
        click('#buy', 0.5, 0.5, 13, '/a', true),
        click('#buy', 0.5, 0.5, -1),
        event({ eventType: 'hover', timestamp: T0 + 14, properties: { selector: '#buy', relativeX: 0.5, relativeY: 0.5 }, d: { path: '/a' } }),
        depth(100, 20),
        depth(10, 21),
        depth(9.99, 22),
        depth(55, 23),
        depth('80', 24),
        depth(undefined, 25),
        depth(100, 26, '/b'),
      ]);
      expect(await ctx.store.reports.heatmap(query({ filters: { page: '/a' } }), 10)).toEqual({
        clicks: 11,
        elements: [
          {
            selector: '#buy',
            count: 8,
            cells: [
              { x: 0, y: 0, count: 2 },
              { x: 1, y: 0, count: 1 },
              { x: 9, y: 9, count: 2 },
            ],
          },
          { selector: 'a', count: 2, cells: [{ x: 5, y: 5, count: 2 }] },
          { selector: '', count: 1, cells: [{ x: 5, y: 5, count: 1 }] },
        ],
        pageViews: 4,
        reached: [3, 2, 2, 2, 2, 1, 1, 1, 1, 1],
      });
      const top = await ctx.store.reports.heatmap(query({ filters: { page: '/a' }, includeBots: true }), 1);
      expect(top.clicks).toBe(12);
      expect(top.elements.map((e) => [e.selector, e.count])).toEqual([['#buy', 9]]);
    });

    it('counts the heatmap of generated events as a direct count of the same rows does, over ranges, filters and limits', async () => {
      const fixture = heatmapFixture(ctx.projectId, T0, 1500, 20260105);
      await write(fixture);
      let clicks = 0;
      for (const range of [
        { from: T0, to: T0 + DAY_MS },
        { from: T0 + 3_600_000, to: T0 + 7 * 3_600_000 },
      ]) {
        for (const filters of [{ page: '/' }, { page: '/pricing', browser: 'Firefox' }]) {
          for (const includeBots of [false, true]) {
            for (const limit of [2, 100]) {
              const q = query({ ...range, filters, includeBots });
              const expected = expectedHeatmap(fixture, q, limit);
              expect(await ctx.store.reports.heatmap(q, limit), JSON.stringify({ range, filters, includeBots, limit })).toEqual(expected);
              clicks += expected.clicks;
            }
          }
        }
      }
      expect(clicks).toBeGreaterThan(500);
    });
  });
}
