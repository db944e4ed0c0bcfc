import type { EventDimensions, StoredEvent } from '../../server/store/event-store.js';
import type { FilterDimension, FrustrationRow, FrustrationSignal, ReportQuery } from '../../server/store/report-store.js';
import { FRUSTRATION_SIGNALS } from '../../server/store/report-store.js';
import { NO_DIMENSIONS, makeEvent } from './event-store.fixtures.js';

/*
 * Generated events for the frustration report's contract (`report-store.contract.ts`), and the
 * report as a direct count over the same rows: the same rows go to every store, so each store's
 * answer is checked against one count that shares none of its SQL.
 */

const DAY_MS = 86_400_000;

/** A small deterministic generator (mulberry32), so a failure is reproduced by its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const TYPES = [...FRUSTRATION_SIGNALS, 'click', 'page_view'];
// ASCII only, so that JavaScript's string order is the byte order the stores sort by.
const SELECTORS = ['#pay', '#save', 'button[data-testid="buy"]', 'B', 'a', 'body > main > a:nth-of-type(2)', null];
const PATHS = ['/cart', '/checkout', '/', null];
const BROWSERS = ['Firefox', 'Chrome', null];

/** `count` events of one project around the day from `t0`: signals and others, some out of range, some bots. */
export function frustrationFixture(projectId: string, t0: number, count: number, seed: number): StoredEvent[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  return Array.from({ length: count }, (_, k) => {
    const selector = pick(SELECTORS);
    const session = next() < 0.05 ? null : `s${Math.floor(next() * 40)}`;
    // Path before browser: the order the generator draws them in.
    const dimensions: EventDimensions = { ...NO_DIMENSIONS, path: pick(PATHS), browser: pick(BROWSERS) };
    return makeEvent(projectId, 1_000_000 + k, {
      eventType: pick(TYPES),
      // A little before and after the day, so that its edges matter.
      timestamp: t0 - 60_000 + Math.floor(next() * (DAY_MS + 120_000)),
      sessionId: session,
      isBot: next() < 0.1,
      visitorId: null,
      properties: selector === null ? { element: 'div' } : { selector, element: 'button' },
      dimensions,
    });
  });
}

/** The dimension fields the contract filters on. */
const FILTER_FIELDS: Partial<Record<FilterDimension, keyof EventDimensions>> = { page: 'path', browser: 'browser' };

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The frustration report of `q` as a direct count over `events` (report-store.ts gives its order). */
export function expectedFrustration(events: readonly StoredEvent[], q: ReportQuery, limit: number, sessionIds: number): FrustrationRow[] {
  const groups = new Map<string, { row: FrustrationRow; last: Map<string, number> }>();
  for (const e of events) {
    if (e.projectId !== q.projectId || e.timestamp < q.from || e.timestamp >= q.to) continue;
    if (!q.includeBots && e.isBot) continue;
    if (!(FRUSTRATION_SIGNALS as readonly string[]).includes(e.eventType)) continue;
    const filtered = Object.entries(q.filters).some(([dimension, value]) => {
      const field = FILTER_FIELDS[dimension as FilterDimension];
      if (field === undefined) throw new Error(`the fixture has no filter ${dimension}`);
      return (e.dimensions?.[field] ?? null) !== value;
    });
    if (filtered) continue;
    const selector = typeof e.properties.selector === 'string' ? e.properties.selector : '';
    const path = e.dimensions?.path ?? '';
    const key = JSON.stringify([e.eventType, selector, path]);
    let group = groups.get(key);
    if (group === undefined) {
      group = { row: { signal: e.eventType as FrustrationSignal, selector, path, count: 0, sessions: 0, sessionIds: [] }, last: new Map() };
      groups.set(key, group);
    }
    group.row.count++;
    if (e.sessionId !== null) group.last.set(e.sessionId, Math.max(group.last.get(e.sessionId) ?? -Infinity, e.timestamp));
  }
  const rows = [...groups.values()].map(({ row, last }) => ({
    ...row,
    sessions: last.size,
    sessionIds: [...last.entries()]
      .sort((a, b) => b[1] - a[1] || byBytes(a[0], b[0]))
      .slice(0, sessionIds)
      .map(([id]) => id),
  }));
  rows.sort((a, b) => byBytes(a.signal, b.signal) || b.count - a.count || byBytes(a.selector, b.selector) || byBytes(a.path, b.path));
  const kept = new Map<string, number>();
  return rows.filter((row) => {
    const n = (kept.get(row.signal) ?? 0) + 1;
    kept.set(row.signal, n);
    return n <= limit;
  });
}
