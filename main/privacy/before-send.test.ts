import { describe, expect, it } from 'vitest';
import { inProcessClientsPerTest, receivedEvents } from '../../test-support/client/facade-fakes.js';
import type { OutgoingEvent } from './before-send.js';

const client = inProcessClientsPerTest();

describe('beforeSend(event)', () => {
  it('sees every event with its type, name, properties, ids, time and context, and sends what it returns', async () => {
    const seen: OutgoingEvent[] = [];
    const { analytics, server } = client({
      beforeSend(event) {
        seen.push(event);
        if (event.event === 'secret') return null;
        return { ...event, properties: { ...event.properties, email: undefined, redacted: true } };
      },
    });
    analytics.identify('u1', { plan: 'pro' });
    analytics.track('signup', { email: 'a@b.c', step: 2 });
    analytics.track('secret', { token: 'x' });
    await analytics.flush();
    expect(seen.map((e) => [e.type, e.event])).toEqual([
      ['identify', undefined],
      ['track', 'signup'],
      ['track', 'secret'],
    ]);
    expect(seen[1]).toMatchObject({ userId: 'u1', anonymousId: analytics.getAnonymousId(), sessionId: analytics.getSessionId() });
    expect(typeof seen[1]!.timestamp).toBe('number');
    expect(seen[1]!.context.page?.url).toBe(window.location.href);
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual(['user_identify', 'signup']);
    expect(events[1]!.properties).toMatchObject({ step: 2, redacted: true });
    expect(events[1]!.properties).not.toHaveProperty('email');
  });

  it('may rename an event, change its user or its context', async () => {
    const { analytics, server } = client({
      beforeSend: (event) => ({
        ...event,
        event: event.event === 'old_name' ? 'new_name' : event.event,
        userId: 'hashed-user',
        context: { ...event.context, page: { ...event.context.page, url: 'https://site.example/redacted' } },
      }),
    });
    analytics.track('old_name');
    await analytics.flush();
    const [event] = receivedEvents(server);
    expect(event).toMatchObject({ event_type: 'new_name', user_id: 'hashed-user' });
    expect(JSON.parse((event!.properties as { page: string }).page).url).toBe('https://site.example/redacted');
  });

  it('sends the event unchanged when the hook throws, even after it changed the event it was given', async () => {
    const { analytics, server } = client({
      beforeSend(event) {
        event.properties!.value = 'changed';
        throw new Error('bug in the hook');
      },
    });
    analytics.track('kept', { value: 'original' });
    await analytics.flush();
    expect(receivedEvents(server)[0]!.properties).toMatchObject({ value: 'original' });
  });

  it('sends the event as made when the hook returns nothing', async () => {
    const { analytics, server } = client({ beforeSend: (() => undefined) as unknown as () => null });
    analytics.track('kept', { a: 1 });
    await analytics.flush();
    expect(receivedEvents(server)[0]!.properties).toMatchObject({ a: 1 });
  });
});

describe('sampleRate', () => {
  it('0 sends nothing, 1 (the default) everything', async () => {
    const none = client({ sampleRate: 0 });
    none.analytics.track('x');
    await none.analytics.flush();
    expect(receivedEvents(none.server)).toEqual([]);
    const all = client({});
    expect(all.analytics.config.sampleRate).toBe(1);
  });

  it('decides per session: a session is sent whole or not at all, and about the given share of sessions is sent', async () => {
    const { analytics, server } = client({ sampleRate: 0.5 });
    const sessions = new Map<string, number>();
    for (let s = 0; s < 200; s++) {
      analytics.reset();
      for (let i = 0; i < 3; i++) analytics.track('e', { s });
      sessions.set(analytics.getSessionId(), 0);
    }
    await analytics.flush();
    for (const event of receivedEvents(server)) sessions.set(event.session_id as string, sessions.get(event.session_id as string)! + 1);
    const sent = [...sessions.values()].filter((n) => n > 0);
    expect(sent.every((n) => n === 3)).toBe(true);
    // 200 fair coin flips: 100 ± 40 is beyond six standard deviations.
    expect(sent.length).toBeGreaterThan(60);
    expect(sent.length).toBeLessThan(140);
  });

  it('falls back to 1 for a value that is not a number, and takes values above 1 as 1', () => {
    expect(client({ sampleRate: '0.5' as unknown as number }).analytics.config.sampleRate).toBe(1);
    expect(client({ sampleRate: 7 }).analytics.config.sampleRate).toBe(1);
    expect(client({ sampleRate: -1 }).analytics.config.sampleRate).toBe(1);
  });
});
