/** The unload path through the facade: page-hidden posts and pagehide beacons. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from '../analytics.js';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import { beaconEvents, beaconSenderReady, endOfTask, inProcessClient, receivedEvents } from '../../test-support/client/facade-fakes.js';

const clients: Analytics[] = [];

function setVisibility(state: DocumentVisibilityState): void {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  document.dispatchEvent(new Event('visibilitychange'));
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  setVisibility('visible');
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('visibilitychange: hidden', () => {
  it('asks the core to send what is queued now, without waiting for batchSize or flushInterval', async () => {
    const made = inProcessClient();
    clients.push(made.analytics);
    made.analytics.track('before_hide');
    setVisibility('hidden');
    await vi.waitFor(() => expect(receivedEvents(made.server).map((e) => e.event_type)).toEqual(['before_hide']));
  });
});

describe('pagehide', () => {
  it('sends unacknowledged and buffered events by beacon to the beacon form of the endpoint', async () => {
    const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
    const made = inProcessClient({}, { sendBeacon });
    clients.push(made.analytics);
    made.server.state.hold = true; // the worker's request never comes back
    made.analytics.track('in_flight');
    await endOfTask();
    setVisibility('hidden');
    await vi.waitFor(() => expect(made.server.requests).toHaveLength(1));
    made.analytics.track('buffered');
    window.dispatchEvent(new Event('pagehide'));
    expect(sendBeacon).toHaveBeenCalledTimes(1);
    const [url, body] = sendBeacon.mock.calls[0]!;
    const parsed = new URL(url);
    expect(parsed.origin + parsed.pathname).toBe('https://analytics.test/api/v1/events/batch');
    expect(parsed.searchParams.get('api_key')).toBe('key_1');
    expect(parsed.searchParams.get('project_id')).toBe('proj_1');
    expect(Number.isNaN(Date.parse(parsed.searchParams.get('sent_at')!))).toBe(false);
    const events = beaconEvents<{ event_type: string; event_id: string }>(body);
    expect(events.map((e) => e.event_type)).toEqual(['in_flight', 'buffered']);
    // Beaconed events are not sent again by a later pagehide (bfcache).
    window.dispatchEvent(new Event('pagehide'));
    expect(sendBeacon).toHaveBeenCalledTimes(1);
  });

  it('sends exactly the events not acknowledged when a later batch was acknowledged first', async () => {
    const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
    const server = createFakeFetch(['network-error']); // the first batch fails and waits a minute
    const made = inProcessClient({ batchSize: 2, retryDelay: 60_000 }, { sendBeacon, coreDeps: { fetch: server.fetch, compress: undefined } });
    clients.push(made.analytics);
    for (const name of ['a', 'b', 'c', 'd', 'e']) made.analytics.track(name);
    await vi.waitFor(() => expect(made.analytics.getQueueSize()).toBe(3));
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['a', 'b', 'c', 'd']);
    window.dispatchEvent(new Event('pagehide'));
    const body = beaconEvents<{ event_type: string }>(sendBeacon.mock.calls[0]![1]);
    expect(body.map((e) => e.event_type)).toEqual(['a', 'b', 'e']);
  });

  it('sends nothing when everything was acknowledged', async () => {
    const sendBeacon = vi.fn(() => true);
    const made = inProcessClient({}, { sendBeacon });
    clients.push(made.analytics);
    made.analytics.track('done');
    await made.analytics.flush();
    await vi.waitFor(() => expect(made.analytics.getQueueSize()).toBe(0));
    window.dispatchEvent(new Event('pagehide'));
    // Not later either: the beacon chunk may still be loading, and the task-end hook is armed.
    await endOfTask();
    await endOfTask();
    expect(sendBeacon).not.toHaveBeenCalled();
  });

  it('sends by beacon, at the end of their task, events made after its beacon by later pagehide and visibilitychange listeners', async () => {
    const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
    const made = inProcessClient({}, { sendBeacon });
    clients.push(made.analytics);
    made.server.state.hold = true;
    made.analytics.track('early');
    await beaconSenderReady();
    // Added after the client's own listeners, so they run after its pagehide beacon.
    const late = (): void => made.analytics.track('late_pagehide');
    const hidden = (): void => made.analytics.track('late_hidden');
    window.addEventListener('pagehide', late);
    document.addEventListener('visibilitychange', hidden);
    try {
      window.dispatchEvent(new Event('pagehide'));
      expect(sendBeacon).toHaveBeenCalledTimes(1);
      await Promise.resolve(); // the end of the listener's task: its microtasks
      setVisibility('hidden');
      await Promise.resolve();
      const bodies = sendBeacon.mock.calls.map(([, body]) => beaconEvents<{ event_type: string }>(body).map((e) => e.event_type));
      expect(bodies).toEqual([['early'], ['late_pagehide'], ['late_hidden']]);
    } finally {
      window.removeEventListener('pagehide', late);
      document.removeEventListener('visibilitychange', hidden);
    }
  });

  it('goes back to the worker alone once the page is restored from the back/forward cache', async () => {
    const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
    const made = inProcessClient({}, { sendBeacon });
    clients.push(made.analytics);
    made.server.state.hold = true;
    made.analytics.track('before');
    await beaconSenderReady();
    window.dispatchEvent(new Event('pagehide'));
    expect(sendBeacon).toHaveBeenCalledTimes(1);
    made.analytics.track('still_going');
    await endOfTask();
    expect(sendBeacon).toHaveBeenCalledTimes(2);
    window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true }));
    made.analytics.track('after_restore');
    await endOfTask();
    expect(sendBeacon).toHaveBeenCalledTimes(2);
    setVisibility('hidden'); // hidden again, without pagehide: the worker sends
    await vi.waitFor(() => expect(receivedEvents(made.server).map((e) => e.event_type)).toContain('after_restore'));
    expect(sendBeacon).toHaveBeenCalledTimes(2);
    // Leaving the restored page arms the beacon at each task's end again.
    setVisibility('visible');
    window.dispatchEvent(new Event('pagehide'));
    const beacons = sendBeacon.mock.calls.length;
    made.analytics.track('after_second_hide');
    await endOfTask();
    expect(sendBeacon).toHaveBeenCalledTimes(beacons + 1);
    const last = beaconEvents<{ event_type: string }>(sendBeacon.mock.calls.at(-1)![1]);
    expect(last.map((e) => e.event_type)).toContain('after_second_hide');
  });

  it('shutdown() removes the listeners', async () => {
    const sendBeacon = vi.fn(() => true);
    const made = inProcessClient({}, { sendBeacon });
    made.server.state.hold = true;
    made.analytics.track('x');
    await made.analytics.shutdown(0);
    window.dispatchEvent(new Event('pagehide'));
    // Not later either (a chunk still loading, a task-end hook).
    await endOfTask();
    await endOfTask();
    expect(sendBeacon).not.toHaveBeenCalled();
  });
});
