import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { makeEvent, makeEvents } from '../../test-support/worker/delivery-fakes.js';
import { LIMITS } from '../../protocol/limits.js';
import { MAX_BATCH_BYTES, MAX_BATCH_EVENTS, MAX_BEACON_BYTES, type BeaconBody, beaconUrl, sendByBeacon } from './beacon.js';

const target = { endpoint: 'https://analytics.test', apiKey: 'key 1', projectId: 'proj_1', now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 6) };
/** The plain form, to test splitting and refusals by JSON size. */
const plain = { ...target, compress: false } as const;

function bodies(spy: ReturnType<typeof vi.fn>): Array<Array<{ event_id: string }>> {
  return spy.mock.calls.map(([, body]) => JSON.parse(body as string) as Array<{ event_id: string }>);
}

describe('MAX_BEACON_BYTES', () => {
  it('is the wire contract limit, as are the batch limits', () => {
    expect(MAX_BEACON_BYTES).toBe(LIMITS.maxBeaconBytes);
    expect(MAX_BATCH_EVENTS).toBe(LIMITS.maxEventsPerBatch);
    expect(MAX_BATCH_BYTES).toBe(LIMITS.maxBatchBodyBytes);
  });
});

describe('beaconUrl()', () => {
  it('is the batch endpoint with key, project and send time in the query', () => {
    expect(beaconUrl(target, target.now())).toBe(
      'https://analytics.test/api/v1/events/batch?api_key=key+1&project_id=proj_1&sent_at=2026-01-02T03%3A04%3A05.006Z',
    );
  });
});

describe('sendByBeacon(events, target)', () => {
  it('sends the mapped backend events as one JSON array', () => {
    const sendBeacon = vi.fn(() => true);
    const result = sendByBeacon(makeEvents(3), { ...target, sendBeacon });
    expect(sendBeacon).toHaveBeenCalledTimes(1);
    const [url] = sendBeacon.mock.calls[0] as unknown as [string, string];
    expect(url).toContain('/api/v1/events/batch?api_key=');
    const [body] = bodies(sendBeacon);
    expect(body!.map((e) => e.event_id)).toEqual(['evt-000000', 'evt-000001', 'evt-000002']);
    expect(body![0]).toMatchObject({ event_type: 'clicked', session_id: 'sess-1' });
    expect(result).toEqual({ sent: ['evt-000000', 'evt-000001', 'evt-000002'], unsent: [] });
  });

  it("adds the core's time zone to events whose context has none", () => {
    const sendBeacon = vi.fn(() => true);
    sendByBeacon(makeEvents(2), { ...plain, sendBeacon, timezone: 'America/Lima' });
    const [body] = bodies(sendBeacon) as unknown as Array<Array<{ properties: Record<string, unknown> }>>;
    expect(body!.map((e) => e.properties.timezone)).toEqual(['America/Lima', 'America/Lima']);
  });

  it('splits into beacons of at most 60 KB, in order', () => {
    const sendBeacon = vi.fn((_url: string, _body: BeaconBody) => true);
    const big = 'x'.repeat(10 * 1024);
    const events = Array.from({ length: 20 }, (_, i) => makeEvent(i, { properties: { big } }));
    const result = sendByBeacon(events, { ...plain, sendBeacon });
    expect(sendBeacon.mock.calls.length).toBeGreaterThan(3);
    for (const [, body] of sendBeacon.mock.calls) expect(new TextEncoder().encode(body as string).length).toBeLessThanOrEqual(60 * 1024);
    expect(bodies(sendBeacon).flat().map((e) => e.event_id)).toEqual(events.map((e) => e.id));
    expect(result.sent).toHaveLength(20);
  });

  it('splits a refused beacon in halves and stops when even one event is refused', () => {
    let calls = 0;
    // Refuses anything with more than 2 events, then the 4th accepted beacon onwards.
    const sendBeacon = vi.fn((_url: string, body: BeaconBody) => {
      const n = (JSON.parse(body as string) as unknown[]).length;
      if (n > 2) return false;
      calls += 1;
      return calls <= 2;
    });
    const result = sendByBeacon(makeEvents(8), { ...plain, sendBeacon });
    expect(result.sent).toEqual(['evt-000000', 'evt-000001', 'evt-000002', 'evt-000003']);
    expect(result.unsent).toHaveLength(4);
  });

  it('leaves out an event larger than a beacon and a sendBeacon that throws', () => {
    const huge = makeEvent(1, { properties: { huge: 'y'.repeat(70 * 1024) } });
    const ok = vi.fn(() => true);
    expect(sendByBeacon([huge, makeEvent(2)], { ...plain, sendBeacon: ok })).toEqual({ sent: ['evt-000002'], unsent: ['evt-000001'] });
    const throwing = vi.fn(() => {
      throw new TypeError('Illegal invocation');
    });
    expect(sendByBeacon([makeEvent(3)], { ...target, sendBeacon: throwing }).unsent).toEqual(['evt-000003']);
  });

  it('gzips what it sends, with encoding=gzip, so that 500 realistic events fit the 64 KB beacon budget', () => {
    const sendBeacon = vi.fn((_url: string, _body: BeaconBody) => true);
    const events = Array.from({ length: 500 }, (_, i) =>
      makeEvent(i, { properties: { path: `/products/${i % 40}`, title: 'Running shoes, trail, waterproof', plan: 'pro', referrer: 'https://www.example.com/search?q=shoes', i } }),
    );
    const result = sendByBeacon(events, { ...target, sendBeacon });
    expect(result).toEqual({ sent: events.map((e) => e.id), unsent: [] });
    const calls = sendBeacon.mock.calls;
    const total = calls.reduce((sum, [, body]) => sum + (body as Uint8Array).length, 0);
    expect(total).toBeLessThanOrEqual(64 * 1024);
    for (const [url, body] of calls) {
      expect(url).toContain('&encoding=gzip');
      expect(body).toBeInstanceOf(Uint8Array);
    }
    const sent = calls.flatMap(([, body]) => JSON.parse(gunzipSync(body as Uint8Array).toString('utf8')) as Array<{ event_id: string }>);
    expect(sent.map((e) => e.event_id)).toEqual(events.map((e) => e.id));
  });

  it('carries every character exactly, plain and gzipped, past its first buffer and through the halving of a refused beacon', () => {
    const text = 'café 東京 🚀 \u2028 "quoted" \\ '.repeat(20);
    const events = Array.from({ length: 60 }, (_, i) => makeEvent(i, { properties: { text, i } }));
    const wire = (body: BeaconBody) =>
      JSON.parse(typeof body === 'string' ? body : gunzipSync(body).toString('utf8')) as Array<{ event_id: string; properties: { text: string; i: number } }>;
    for (const options of [plain, target]) {
      // The first beacon is refused: the part is sent again in halves.
      const sendBeacon = vi.fn((_url: string, _body: BeaconBody) => true).mockImplementationOnce(() => false);
      expect(sendByBeacon(events, { ...options, sendBeacon }).sent).toHaveLength(60);
      const sent = sendBeacon.mock.calls.slice(1).flatMap(([, body]) => wire(body));
      expect(sent.map((e) => e.event_id)).toEqual(events.map((e) => e.id));
      expect(sent.every((e, i) => e.properties.text === text && e.properties.i === i)).toBe(true);
    }
  });

  it('sends a small set as plain JSON, and never more events in one beacon than a batch holds', () => {
    const small = vi.fn((_url: string, _body: BeaconBody) => true);
    sendByBeacon(makeEvents(2), { ...target, sendBeacon: small });
    expect(typeof small.mock.calls[0]![1]).toBe('string');
    expect(small.mock.calls[0]![0]).not.toContain('encoding=');
    const many = vi.fn((_url: string, _body: BeaconBody) => true);
    const events = makeEvents(MAX_BATCH_EVENTS + 200);
    expect(sendByBeacon(events, { ...target, sendBeacon: many }).sent).toHaveLength(events.length);
    const counts = many.mock.calls.map(([, body]) => (JSON.parse(gunzipSync(body as Uint8Array).toString('utf8')) as unknown[]).length);
    expect(counts).toEqual([MAX_BATCH_EVENTS, 200]);
  });
});
