import { describe, expect, it, vi } from 'vitest';
import { makeEvent, makeEvents } from '../../worker/testing.js';
import { LIMITS } from '../../protocol/limits.js';
import { MAX_BEACON_BYTES, beaconUrl, sendByBeacon } from './beacon.js';

const target = { endpoint: 'https://analytics.test', apiKey: 'key 1', projectId: 'proj_1', now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 6) };

function bodies(spy: ReturnType<typeof vi.fn>): Array<Array<{ event_id: string }>> {
  return spy.mock.calls.map(([, body]) => JSON.parse(body as string) as Array<{ event_id: string }>);
}

describe('MAX_BEACON_BYTES', () => {
  it('is the wire contract limit', () => {
    expect(MAX_BEACON_BYTES).toBe(LIMITS.maxBeaconBytes);
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

  it('splits into beacons of at most 60 KB, in order', () => {
    const sendBeacon = vi.fn((_url: string, _body: string) => true);
    const big = 'x'.repeat(10 * 1024);
    const events = Array.from({ length: 20 }, (_, i) => makeEvent(i, { properties: { big } }));
    const result = sendByBeacon(events, { ...target, sendBeacon });
    expect(sendBeacon.mock.calls.length).toBeGreaterThan(3);
    for (const [, body] of sendBeacon.mock.calls) expect(new TextEncoder().encode(body).length).toBeLessThanOrEqual(60 * 1024);
    expect(bodies(sendBeacon).flat().map((e) => e.event_id)).toEqual(events.map((e) => e.id));
    expect(result.sent).toHaveLength(20);
  });

  it('splits a refused beacon in halves and stops when even one event is refused', () => {
    let calls = 0;
    // Refuses anything with more than 2 events, then the 4th accepted beacon onwards.
    const sendBeacon = vi.fn((_url: string, body: string) => {
      const n = (JSON.parse(body) as unknown[]).length;
      if (n > 2) return false;
      calls += 1;
      return calls <= 2;
    });
    const result = sendByBeacon(makeEvents(8), { ...target, sendBeacon });
    expect(result.sent).toEqual(['evt-000000', 'evt-000001', 'evt-000002', 'evt-000003']);
    expect(result.unsent).toHaveLength(4);
  });

  it('leaves out an event larger than a beacon and a sendBeacon that throws', () => {
    const huge = makeEvent(1, { properties: { huge: 'y'.repeat(70 * 1024) } });
    const ok = vi.fn(() => true);
    expect(sendByBeacon([huge, makeEvent(2)], { ...target, sendBeacon: ok })).toEqual({ sent: ['evt-000002'], unsent: ['evt-000001'] });
    const throwing = vi.fn(() => {
      throw new TypeError('Illegal invocation');
    });
    expect(sendByBeacon([makeEvent(3)], { ...target, sendBeacon: throwing }).unsent).toEqual(['evt-000003']);
  });
});
