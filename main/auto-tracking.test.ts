/** Automatic error, heatmap and performance tracking through the facade, each behind its flag. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from './analytics.js';
import { MAX_ERRORS_PER_MINUTE, selectorOf } from './auto-tracking.js';
import { endOfTask, inProcessClient, receivedEvents } from './testing.js';

const clients: Analytics[] = [];

async function client(config: Parameters<typeof inProcessClient>[0]) {
  const made = inProcessClient(config);
  clients.push(made.analytics);
  await import('./auto-tracking.js');
  await endOfTask();
  return made;
}

function props(event: Record<string, unknown> | undefined): Record<string, unknown> {
  return event!.properties as Record<string, unknown>;
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
  document.body.innerHTML = '';
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('enableErrorTracking', () => {
  it('sends uncaught errors and unhandled rejections as error events', async () => {
    const { analytics, server } = await client({ enableErrorTracking: true });
    const error = new Error('exploded');
    window.dispatchEvent(new ErrorEvent('error', { message: 'Uncaught Error: exploded', filename: 'https://app/x.js', lineno: 3, colno: 7, error }));
    const rejection = new Event('unhandledrejection');
    Object.assign(rejection, { reason: new TypeError('no such thing') });
    window.dispatchEvent(rejection);
    await analytics.flush();
    const [uncaught, unhandled] = receivedEvents(server);
    expect(uncaught!.event_type).toBe('error');
    expect(props(uncaught)).toMatchObject({ message: 'Uncaught Error: exploded', filename: 'https://app/x.js', lineno: 3, colno: 7, type: 'javascript' });
    expect(props(uncaught).stack).toContain('exploded');
    expect(props(unhandled)).toMatchObject({ message: 'no such thing', type: 'unhandledrejection' });
  });

  it(`sends at most ${MAX_ERRORS_PER_MINUTE} a minute`, async () => {
    const { analytics, server } = await client({ enableErrorTracking: true });
    for (let i = 0; i < MAX_ERRORS_PER_MINUTE + 10; i++) window.dispatchEvent(new ErrorEvent('error', { message: `e${i}` }));
    await analytics.flush();
    expect(receivedEvents(server)).toHaveLength(MAX_ERRORS_PER_MINUTE);
  });

  it('listens to nothing when off', async () => {
    const { analytics, server } = await client({});
    window.dispatchEvent(new ErrorEvent('error', { message: 'ignored' }));
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
  });
});

describe('enableHeatmapTracking', () => {
  it('sends click with element, selector, coordinates and viewport', async () => {
    const { analytics, server } = await client({ enableHeatmapTracking: true });
    document.body.innerHTML = '<main><div class="card pro"><button id="buy">Buy</button></div></main>';
    document.getElementById('buy')!.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 10, clientY: 20 }));
    await analytics.flush();
    const [click] = receivedEvents(server);
    expect(click!.event_type).toBe('click');
    expect(props(click)).toMatchObject({ element: 'button', selector: 'button#buy', action: 'click' });
    expect(typeof props(click).x).toBe('number');
    expect(JSON.parse(props(click).viewport as string)).toEqual({ width: window.innerWidth, height: window.innerHeight });
    expect(analytics.getSessionData().clickEvents).toBe(1);
  });

  it('sends hover once the pointer rests on an element', async () => {
    const { analytics, server } = await client({ enableHeatmapTracking: true });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      document.body.innerHTML = '<p class="lead">Hello</p>';
      const p = document.querySelector('p')!;
      p.dispatchEvent(new MouseEvent('mousemove', { bubbles: true }));
      p.dispatchEvent(new MouseEvent('mousemove', { bubbles: true }));
      await vi.advanceTimersByTimeAsync(1000);
      p.dispatchEvent(new MouseEvent('mousemove', { bubbles: true }));
      await vi.advanceTimersByTimeAsync(1000);
      vi.useRealTimers();
      await analytics.flush();
      const hovers = receivedEvents(server).filter((e) => e.event_type === 'hover');
      expect(hovers).toHaveLength(1);
      expect(props(hovers[0])).toMatchObject({ element: 'p', selector: 'p.lead', action: 'move' });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('selectorOf(element)', () => {
  it('stops at an id and keeps at most three levels and two classes', () => {
    document.body.innerHTML = '<section id="s"><div class="a b c"><ul><li><a class="x">x</a></li></ul></div></section>';
    expect(selectorOf(document.querySelector('a')!)).toBe('ul > li > a.x');
    expect(selectorOf(document.querySelector('div')!)).toBe('section#s > div.a.b');
  });
});

describe('enablePerformanceTracking', () => {
  it('sends one performance event when the page is first hidden', async () => {
    const { analytics, server } = await client({ enablePerformanceTracking: true });
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
    document.dispatchEvent(new Event('visibilitychange'));
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['performance']);
  });
});
