/** Frustration signals: rage, dead and error clicks, and nothing left running between clicks. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SILENT } from '../logger.js';
import { markInternal } from './internal-error.js';
import { CLICK_WINDOW_MS, RAGE_CLICKS, RAGE_WINDOW_MS, trackFrustration } from './frustration-signals.js';

let stop: (() => void) | undefined;
let sent: Array<{ name: string; properties: Record<string, unknown> }>;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  sent = [];
  stop = trackFrustration(window, { send: (name, properties) => sent.push({ name, properties }), now: () => Date.now(), log: SILENT });
});
afterEach(() => {
  stop?.();
  vi.useRealTimers();
  document.body.innerHTML = '';
});

const click = (target: Element) => target.dispatchEvent(new MouseEvent('click', { bubbles: true }));
/** Lets queued mutation records reach their observer. */
const microtasks = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe('trackFrustration(win)', () => {
  it(`sends rage_click once when ${RAGE_CLICKS} clicks on one element fall within ${RAGE_WINDOW_MS} ms`, () => {
    document.body.innerHTML = '<button id="pay"><span>Pay</span></button><button id="other">Other</button>';
    const span = document.querySelector('#pay span')!;
    click(span);
    vi.advanceTimersByTime(400);
    click(span);
    vi.advanceTimersByTime(400);
    click(document.getElementById('pay')!);
    vi.advanceTimersByTime(100);
    click(span);
    expect(sent.filter((e) => e.name === 'rage_click')).toEqual([{ name: 'rage_click', properties: { selector: '#pay', element: 'button', clicks: RAGE_CLICKS } }]);
  });

  it('sends no rage_click for clicks spread over more than the window, or alternating between elements', () => {
    document.body.innerHTML = '<button id="a">A</button><button id="b">B</button>';
    const a = document.getElementById('a')!;
    const b = document.getElementById('b')!;
    for (const target of [a, b, a, b, a, b]) {
      click(target);
      vi.advanceTimersByTime(100);
    }
    for (let i = 0; i < 3; i++) {
      click(a);
      vi.advanceTimersByTime(RAGE_WINDOW_MS / 2 + 1);
    }
    expect(sent.filter((e) => e.name === 'rage_click')).toEqual([]);
  });

  it(`sends dead_click when an interactive element's click changes nothing for ${CLICK_WINDOW_MS} ms`, async () => {
    document.body.innerHTML = '<main><a href="#" id="nowhere">Go</a><p>text</p></main>';
    document.getElementById('nowhere')!.addEventListener('click', (e) => e.preventDefault());
    click(document.getElementById('nowhere')!);
    click(document.querySelector('p')!);
    // The click on the paragraph (not interactive) replaced the link's watch: nothing yet.
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    await microtasks();
    expect(sent).toEqual([]);

    click(document.getElementById('nowhere')!);
    vi.advanceTimersByTime(CLICK_WINDOW_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([{ name: 'dead_click', properties: { selector: '#nowhere', element: 'a' } }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('sends no dead_click when the click changed the DOM, even in its last moment', async () => {
    document.body.innerHTML = '<button id="open">Open</button><button id="late">Late</button>';
    document.getElementById('open')!.addEventListener('click', () => document.body.append(document.createElement('dialog')));
    click(document.getElementById('open')!);
    await microtasks();
    expect(vi.getTimerCount()).toBe(0);

    click(document.getElementById('late')!);
    vi.advanceTimersByTime(CLICK_WINDOW_MS - 10);
    document.getElementById('late')!.setAttribute('aria-busy', 'true');
    vi.advanceTimersByTime(10);
    await microtasks();
    expect(sent).toEqual([]);
  });

  it("sends no dead_click when the click made a request of the page's own, even one whose entry was not delivered yet", () => {
    /** Resource timing whose entries wait for delivery, as on a busy page. */
    class QueuedResourceTiming {
      static current: QueuedResourceTiming | undefined;
      queued: Array<{ name: string; startTime: number }> = [];
      constructor(readonly deliver: (list: { getEntries(): Array<{ name: string; startTime: number }> }) => void) {
        QueuedResourceTiming.current = this;
      }
      observe(): void {}
      disconnect(): void {}
      takeRecords(): Array<{ name: string; startTime: number }> {
        return this.queued.splice(0);
      }
    }
    vi.stubGlobal('PerformanceObserver', QueuedResourceTiming);
    try {
      stop?.();
      stop = trackFrustration(window, { send: (name, properties) => sent.push({ name, properties }), now: () => Date.now(), log: SILENT, ownUrl: 'https://stats.example/api/' });
      document.body.innerHTML = '<button id="refresh">Refresh</button>';
      const button = document.getElementById('refresh')!;
      const clickAndRequest = (name: string, startedBefore = false): void => {
        click(button);
        QueuedResourceTiming.current!.queued.push({ name, startTime: performance.now() - (startedBefore ? 1_000 : 0) });
        vi.advanceTimersByTime(CLICK_WINDOW_MS);
      };
      clickAndRequest('https://shop.example/cart.json');
      expect(sent).toEqual([]);
      // The library's own upload, and a request that started before the click, are not an answer.
      clickAndRequest('https://stats.example/api/v1/batch');
      clickAndRequest('https://shop.example/cart.json', true);
      expect(sent.map((e) => e.name)).toEqual(['dead_click', 'dead_click']);
      // An entry delivered in the window answers at once.
      click(button);
      QueuedResourceTiming.current!.deliver({ getEntries: () => [{ name: 'https://shop.example/cart.json', startTime: performance.now() }] });
      expect(vi.getTimerCount()).toBe(0);
      expect(sent).toHaveLength(2);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('sends no dead_click for a link that opens elsewhere, or for an element that promises nothing', () => {
    document.body.innerHTML = '<a href="/doc.pdf" target="_blank" id="doc">Doc</a><div id="plain">Plain</div>';
    // The test's DOM would open the link for real.
    document.getElementById('doc')!.addEventListener('click', (e) => e.preventDefault());
    click(document.getElementById('doc')!);
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    click(document.getElementById('plain')!);
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    expect(sent).toEqual([]);
  });

  it('sends error_click for an uncaught error after a click, and then no dead_click', () => {
    document.body.innerHTML = '<button data-testid="save">Save</button>';
    click(document.querySelector('button')!);
    vi.advanceTimersByTime(300);
    window.dispatchEvent(new ErrorEvent('error', { message: 'Uncaught TypeError: x is undefined', error: new TypeError('x is undefined') }));
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    expect(sent).toEqual([
      { name: 'error_click', properties: { selector: 'button[data-testid="save"]', element: 'button', message: 'Uncaught TypeError: x is undefined' } },
    ]);
  });

  it('sends error_click for an unhandled rejection, on any element; not for the library\'s own errors or after the window', () => {
    document.body.innerHTML = '<p id="text">Text</p>';
    const p = document.getElementById('text')!;
    click(p);
    window.dispatchEvent(new ErrorEvent('error', { message: 'ours', error: markInternal(new Error('ours')) }));
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    window.dispatchEvent(new ErrorEvent('error', { message: 'too late', error: new Error('too late') }));
    click(p);
    const rejection = new Event('unhandledrejection') as Event & { reason?: unknown };
    rejection.reason = new Error('save failed');
    window.dispatchEvent(rejection);
    expect(sent).toEqual([{ name: 'error_click', properties: { selector: '#text', element: 'p', message: 'save failed' } }]);
  });

  it('keeps nothing running between clicks, and stop ends a pending watch', () => {
    document.body.innerHTML = '<button id="b">B</button>';
    expect(vi.getTimerCount()).toBe(0);
    click(document.getElementById('b')!);
    expect(vi.getTimerCount()).toBe(1);
    stop?.();
    stop = undefined;
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(CLICK_WINDOW_MS);
    click(document.getElementById('b')!);
    expect(sent).toEqual([]);
  });
});
