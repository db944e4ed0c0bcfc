/**
 * The console and network capture on a stand-in page (the real wrappers run in Chromium in
 * examples/browser-tests/recorder-console-network.e2e.test.ts): what the wrappers note, when the
 * queue becomes recorded events, masking, the caps, and that every stop takes the wrappers out.
 */
import { describe, expect, it } from 'vitest';
import type { ConsoleEntry, NetworkEntry } from '../../../protocol/replay-entries.js';
import type { RecordedEvent } from '../../../protocol/wire-types.js';
import { SILENT } from '../../logger.js';
import { createMaskedValues } from '../masked-values.js';
import { type PageContextSettings, startPageContext } from './page-context.js';

interface StandIn {
  win: Window;
  logged: unknown[][];
  fetched: string[];
  beacons: string[];
  originals: { log: unknown; fetch: unknown; sendBeacon: unknown };
}

/**
 * A page with a console, fetch and sendBeacon that only note their calls, and no idle callbacks;
 * its resource timings are `timings` (its clock, `performance.now()`, moves 5 ms a reading).
 */
function standIn(timings: Array<Partial<PerformanceResourceTiming>> = []): StandIn {
  const logged: unknown[][] = [];
  const fetched: string[] = [];
  const beacons: string[] = [];
  const console = {
    log: (...args: unknown[]) => logged.push(args),
    info: (...args: unknown[]) => logged.push(args),
    warn: (...args: unknown[]) => logged.push(args),
    error: (...args: unknown[]) => logged.push(args),
    assert: (...args: unknown[]) => logged.push(args),
  };
  const fetch = (input: unknown) => {
    fetched.push(String(input));
    return Promise.resolve(new Response('{"ok":true}', { status: String(input).includes('missing') ? 404 : 200, headers: { 'content-type': 'application/json' } }));
  };
  const navigator = { sendBeacon: (url: string) => (beacons.push(url), true) };
  let t = 0;
  const win = {
    console,
    fetch,
    navigator,
    location: { href: 'https://shop.example/checkout' },
    performance: { now: () => (t += 5), getEntriesByType: (type: string) => (type === 'resource' ? timings : []) },
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    document,
  } as unknown as Window;
  return { win, logged, fetched, beacons, originals: { log: console.log, fetch, sendBeacon: navigator.sendBeacon } };
}

function settings(page: StandIn, overrides: Partial<PageContextSettings> = {}): { settings: PageContextSettings; events: RecordedEvent[]; timers: Array<() => void> } {
  const events: RecordedEvent[] = [];
  const timers: Array<() => void> = [];
  let now = 1_000_000;
  return {
    events,
    timers,
    settings: {
      win: page.win,
      now: () => (now += 10),
      timers: { setTimeout: (cb: () => void) => timers.push(cb), clearTimeout: () => undefined },
      log: SILENT,
      console: true,
      network: true,
      maskAllText: false,
      masked: createMaskedValues(),
      noteMaskedInputs: () => undefined,
      endpoint: 'https://analytics.example',
      emit: (event) => events.push(event),
      ...overrides,
    },
  };
}

const payloads = <T>(events: RecordedEvent[], tag: string): T[] =>
  events.filter((e) => (e.data as { tag: string }).tag === tag).map((e) => (e.data as { payload: T }).payload);

describe('startPageContext(settings)', () => {
  it('notes console calls inside the call and formats them later, masked with what the masking hid', () => {
    const page = standIn();
    const { settings: s, events, timers } = settings(page);
    s.masked.note('typed-Secret-1');
    const context = startPageContext(s);
    const console = (page.win as unknown as { console: Record<string, (...a: unknown[]) => void> }).console;
    console.log('password is', 'typed-Secret-1');
    console.assert(true, 'not failed');
    console.assert(false, 'failed');
    console.log('[service-analytics] the client’s own debug line');
    // The page's console still got every call; nothing is formatted until the queue drains.
    expect(page.logged).toHaveLength(4);
    expect(events).toHaveLength(0);
    expect(timers).toHaveLength(1);
    timers[0]!();
    const entries = payloads<ConsoleEntry>(events, 'service-analytics:console');
    expect(entries.map((e) => [e.level, e.message])).toEqual([
      ['log', `password is ${'*'.repeat(14)}`],
      ['assert', 'failed'],
    ]);
    expect(entries[1]!.stack).toBeTruthy();
    context.stop();
    expect(console.log).toBe(page.originals.log);
  });

  it('masks every message whole with maskAllText, and caps entries per second, saying how many it dropped', () => {
    const page = standIn();
    const { settings: s, events } = settings(page, { maskAllText: true, console: { maxEntriesPerSecond: 2 } });
    const context = startPageContext(s);
    const console = (page.win as unknown as { console: Record<string, (...a: unknown[]) => void> }).console;
    for (let i = 0; i < 5; i++) console.log('line', i);
    context.drain();
    expect(payloads<ConsoleEntry>(events, 'service-analytics:console').map((e) => e.message)).toEqual(['**** *', '**** *']);
    context.stop();
  });

  it("records the page's requests with redacted URLs and sizes, never the client's own uploads, and unwraps on stop", async () => {
    const page = standIn();
    const { settings: s, events } = settings(page);
    const context = startPageContext(s);
    const w = page.win as unknown as { fetch: (url: string, init?: RequestInit) => Promise<Response>; navigator: { sendBeacon: (url: string, data: string) => boolean } };
    await w.fetch('/api/cart?user=42', { method: 'post', body: 'four' });
    await w.fetch('/api/missing');
    await w.fetch('https://analytics.example/api/v1/events/batch');
    w.navigator.sendBeacon('/api/log', 'abc');
    await new Promise((resolve) => setTimeout(resolve));
    context.drain();
    const requests = payloads<NetworkEntry>(events, 'service-analytics:network');
    expect(requests.map((r) => [r.initiator, r.method, r.url, r.status, r.requestSize])).toEqual([
      ['fetch', 'POST', 'https://shop.example/api/cart?user=[redacted]', 200, 4],
      ['fetch', 'GET', 'https://shop.example/api/missing', 404, undefined],
      ['beacon', 'POST', 'https://shop.example/api/log', 0, 3],
    ]);
    expect(requests[0]).not.toHaveProperty('requestHeaders');
    expect(page.fetched).toHaveLength(3);
    context.stop();
    expect(w.fetch).toBe(page.originals.fetch);
    expect(w.navigator.sendBeacon).toBe(page.originals.sendBeacon);
  });

  it("takes a request's duration and response size from the browser's timing of its URL that started closest after it", async () => {
    // The request starts at 5 and is answered at 10 on the page's clock.
    const url = 'https://shop.example/api/cart?id=1';
    const timing = (name: string, startTime: number, responseEnd: number, encodedBodySize: number) => ({ name, startTime, responseEnd, encodedBodySize });
    const page = standIn([
      timing(url, -50, -10, 1),
      timing('https://shop.example/api/other', 5, 80, 2),
      timing(url, 8, 90, 3),
      timing(url, 4.5, 41.5, 123),
    ]);
    const { settings: s, events } = settings(page);
    const context = startPageContext(s);
    await (page.win as unknown as { fetch: (url: string) => Promise<Response> }).fetch('/api/cart?id=1');
    await new Promise((resolve) => setTimeout(resolve));
    context.drain();
    const [entry] = payloads<NetworkEntry>(events, 'service-analytics:network');
    expect([entry!.url, entry!.duration, entry!.responseSize]).toEqual(['https://shop.example/api/cart?id=[redacted]', 37, 123]);
    context.stop();
  });
});
