import { describe, expect, it, vi } from 'vitest';
import { isAnalyticsError } from '../errors.js';
import type { DiscardInfo } from '../config.js';
import { endOfTask, inProcessClientsPerTest, receivedEvents } from '../../test-support/client/facade-fakes.js';
import { consentKey, forgetStored, initialConsent } from './consent.js';

const PREFIX = 'service-analytics:proj_1:';
const client = inProcessClientsPerTest();
/** Our keys in localStorage. */
const storedKeys = (): string[] => Object.keys(localStorage).filter((k) => k.startsWith(PREFIX));

describe('initialConsent(configured, respectDoNotTrack, stored, navigator)', () => {
  const nav = (values: Record<string, unknown>) => values as unknown as Navigator;
  it('answers the stored choice first, then Do-Not-Track or Global Privacy Control when respected, then the configured state', () => {
    expect(initialConsent('pending', true, 'granted', nav({ doNotTrack: '1' }))).toBe('granted');
    expect(initialConsent('granted', false, 'denied', nav({}))).toBe('denied');
    expect(initialConsent('granted', true, null, nav({ doNotTrack: '1' }))).toBe('denied');
    expect(initialConsent('granted', true, null, nav({ globalPrivacyControl: true }))).toBe('denied');
    expect(initialConsent('granted', false, null, nav({ doNotTrack: '1', globalPrivacyControl: true }))).toBe('granted');
    expect(initialConsent('pending', true, 'something else', nav({ doNotTrack: '0' }))).toBe('pending');
    expect(initialConsent('pending', true, null, undefined)).toBe('pending');
  });
});

describe('forgetStored(storage, prefix)', () => {
  it("removes every key of the client but the choice, and leaves other keys and other projects' alone", () => {
    localStorage.setItem(`${PREFIX}anonymous_id`, 'a');
    localStorage.setItem(`${PREFIX}session`, 's');
    localStorage.setItem(consentKey(PREFIX), 'denied');
    localStorage.setItem('service-analytics:other:anonymous_id', 'b');
    localStorage.setItem('app-theme', 'dark');
    forgetStored(() => localStorage, PREFIX);
    expect(Object.keys(localStorage).sort()).toEqual([consentKey(PREFIX), 'app-theme', 'service-analytics:other:anonymous_id'].sort());
  });

  it('does nothing when there is no storage or it throws', () => {
    expect(() => forgetStored(() => undefined, PREFIX)).not.toThrow();
    expect(() =>
      forgetStored(() => {
        throw new Error('SecurityError');
      }, PREFIX),
    ).not.toThrow();
  });
});

describe("consent: 'pending'", () => {
  it('holds events in memory: nothing is sent and nothing written to storage, until optIn() sends them all', async () => {
    const { analytics, server } = client({ consent: 'pending' });
    analytics.identify('user-7');
    analytics.register({ plan: 'pro' });
    for (let i = 0; i < 5; i++) analytics.track('held', { i });
    await endOfTask();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(server.requests).toEqual([]);
    expect(storedKeys()).toEqual([]);
    expect(analytics.getQueueSize()).toBe(6);
    expect((await analytics.getDeliveryStats()).mode).toBe('held');
    await expect(analytics.flush()).rejects.toSatisfy((e: unknown) => isAnalyticsError(e) && e.code === 'NO_CONSENT');

    analytics.optIn();
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual(['user_identify', 'held', 'held', 'held', 'held', 'held']);
    expect(events[1]!.properties).toMatchObject({ plan: 'pro', i: 0 });
    expect(events[1]!.user_id).toBe('user-7');
    // What was kept in memory is stored now: the same ids continue on the next load.
    expect(localStorage.getItem(`${PREFIX}anonymous_id`)).toBe(analytics.getAnonymousId());
    expect(localStorage.getItem(`${PREFIX}user_id`)).toBe('user-7');
    expect(localStorage.getItem(consentKey(PREFIX))).toBe('granted');
    expect(analytics.hasOptedOut()).toBe(false);
  });

  it('keeps at most maxQueueSize events while held, dropping the oldest', async () => {
    const discards: DiscardInfo[] = [];
    const { analytics, server } = client({ consent: 'pending', maxQueueSize: 10, onDiscard: (info) => discards.push(info) });
    for (let i = 0; i < 25; i++) analytics.track('e', { i });
    await endOfTask();
    analytics.optIn();
    await analytics.flush();
    const sent = receivedEvents(server).map((e) => (e.properties as { i: number }).i);
    expect(sent.length).toBeLessThanOrEqual(10);
    expect(sent.at(-1)).toBe(24);
    expect(discards.flatMap((d) => d.ids)).toHaveLength(25 - sent.length);
  });

  it('optOut() drops what was held, sends nothing, and stores only the choice', async () => {
    const discards: DiscardInfo[] = [];
    const { analytics, server } = client({ consent: 'pending', onDiscard: (info) => discards.push(info) });
    analytics.track('held');
    analytics.optOut();
    analytics.track('after');
    await endOfTask();
    expect(analytics.getQueueSize()).toBe(0);
    expect(analytics.hasOptedOut()).toBe(true);
    expect(discards.flatMap((d) => d.ids)).toHaveLength(1);
    expect(storedKeys()).toEqual([consentKey(PREFIX)]);
    expect(localStorage.getItem(consentKey(PREFIX))).toBe('denied');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(server.requests).toEqual([]);
  });

  it('starts a recording asked for while pending at optIn(), not before', async () => {
    const { analytics } = client({ consent: 'pending' });
    analytics.startRecording();
    expect(analytics.isRecordingActive()).toBe(false);
    analytics.optIn();
    expect(analytics.isRecordingActive()).toBe(true);
    analytics.stopRecording();
  });
});

describe('the stored choice', () => {
  it('wins over the configured consent on the next load, before anything is sent', async () => {
    const first = client({ consent: 'pending' });
    first.analytics.optOut();
    const { analytics, server } = client({ consent: 'granted' });
    expect(analytics.hasOptedOut()).toBe(true);
    analytics.track('ignored');
    await endOfTask();
    expect(analytics.getQueueSize()).toBe(0);
    expect(server.requests).toEqual([]);

    localStorage.setItem(consentKey(PREFIX), 'granted');
    const later = client({ consent: 'pending', respectDoNotTrack: true });
    later.analytics.track('counted');
    await later.analytics.flush();
    expect(receivedEvents(later.server).map((e) => e.event_type)).toEqual(['counted']);
  });

  it('is not stored in memory persistence mode', () => {
    const { analytics } = client({ consent: 'pending', persistence: 'memory' });
    analytics.optIn();
    expect(localStorage.length).toBe(0);
  });
});

describe("optOut() after consent was granted", () => {
  it('drops the queue, removes what the client stored, and sends nothing more', async () => {
    const { analytics, server } = client({ flushInterval: 60_000 });
    analytics.identify('u1');
    analytics.track('queued');
    await endOfTask();
    expect(storedKeys().length).toBeGreaterThan(0);
    analytics.optOut();
    analytics.track('after');
    await endOfTask();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(analytics.getQueueSize()).toBe(0);
    expect(storedKeys()).toEqual([consentKey(PREFIX)]);
    expect(receivedEvents(server)).toEqual([]);
    await expect(analytics.flush()).rejects.toSatisfy((e: unknown) => isAnalyticsError(e) && e.code === 'NO_CONSENT');
    // And back in: later events go out again.
    analytics.optIn();
    analytics.track('back');
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['back']);
  });
});

describe('respectDoNotTrack', () => {
  it('treats Do-Not-Track as denied', async () => {
    const spy = vi.spyOn(navigator, 'doNotTrack', 'get').mockReturnValue('1');
    try {
      const { analytics, server } = client({ respectDoNotTrack: true });
      expect(analytics.hasOptedOut()).toBe(true);
      analytics.track('x');
      await endOfTask();
      expect(server.requests).toEqual([]);
      expect(client({}).analytics.hasOptedOut()).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("persistence: 'memory'", () => {
  it('stores nothing on the device, and ids live for the page', async () => {
    const { analytics, server } = client({ persistence: 'memory', persistQueue: true });
    expect(analytics.config.persistQueue).toBe(false);
    analytics.identify('u1');
    analytics.register({ a: 1 });
    analytics.group('company', 'acme');
    analytics.track('x');
    await analytics.flush();
    expect(localStorage.length).toBe(0);
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['user_identify', 'group_identify', 'x']);
    const other = client({ persistence: 'memory' });
    expect(other.analytics.getAnonymousId()).not.toBe(analytics.getAnonymousId());
  });
});
