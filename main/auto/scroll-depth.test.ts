/** Scroll depth: once per page view, at the navigation that ends it or when the page is hidden, filed under its own page. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SILENT } from '../logger.js';
import { LOCATION_CHANGE } from './page-tracking.js';
import { LOCATION_CHANGE_EVENT, trackScrollDepth } from './scroll-depth.js';

let stop: (() => void) | undefined;
let sent: Array<{ name: string; properties: Record<string, unknown> }>;
/** Animation frames waiting, run by `frames()`. */
let pending: Array<() => void>;
const originals = { raf: window.requestAnimationFrame, caf: window.cancelAnimationFrame };

/** Lays the page out: happy-dom has no layout, so the document's height and the scroll position are given. */
function layout(height: number, scrollY: number, innerHeight = 500): void {
  Object.defineProperty(document.documentElement, 'scrollHeight', { value: height, configurable: true });
  Object.defineProperty(window, 'scrollY', { value: scrollY, configurable: true });
  Object.defineProperty(window, 'innerHeight', { value: innerHeight, configurable: true });
}
const scroll = (y: number): void => {
  Object.defineProperty(window, 'scrollY', { value: y, configurable: true });
  window.dispatchEvent(new Event('scroll'));
};
const frames = (): void => {
  for (const run of pending.splice(0)) run();
};
const navigate = (url: string): void => {
  history.pushState(null, '', url);
  // What the facade's shared history patch fires after pushState while a client runs.
  window.dispatchEvent(new Event(LOCATION_CHANGE));
};
const depths = () => sent.map((e) => [JSON.parse(String(e.properties.page)).path, e.properties.maxScrollDepth, e.properties.documentHeight]);

beforeEach(() => {
  history.replaceState(null, '', '/start');
  pending = [];
  window.requestAnimationFrame = (cb) => pending.push(() => cb(0));
  window.cancelAnimationFrame = () => void pending.pop();
  sent = [];
  layout(2000, 0);
  stop = trackScrollDepth(window, { send: (name, properties) => sent.push({ name, properties }), log: SILENT });
});
afterEach(() => {
  stop?.();
  window.requestAnimationFrame = originals.raf;
  window.cancelAnimationFrame = originals.caf;
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
});

describe('trackScrollDepth(win)', () => {
  it('uses the event name the facade patch fires', () => {
    expect(LOCATION_CHANGE_EVENT).toBe(LOCATION_CHANGE);
  });

  it('sends the deepest point seen, in percent of the document, once, when the page is hidden', () => {
    frames();
    scroll(700);
    scroll(900);
    frames();
    scroll(100);
    frames();
    expect(sent).toEqual([]);
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
    window.dispatchEvent(new Event('pagehide'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.name).toBe('scroll_depth');
    // (900 + 500) / 2000
    expect(sent[0]!.properties).toMatchObject({ maxScrollDepth: 70, documentHeight: 2000, action: 'scroll', viewport: { width: window.innerWidth, height: 500 } });
    expect(JSON.parse(String(sent[0]!.properties.page))).toMatchObject({ path: '/start', url: `${location.origin}/start` });
  });

  it('measures at most once per animation frame, however many scroll events', () => {
    frames();
    for (let y = 0; y <= 1500; y += 100) scroll(y);
    expect(pending).toHaveLength(1);
    frames();
    window.dispatchEvent(new Event('pagehide'));
    expect(depths()).toEqual([['/start', 100, 2000]]);
  });

  it('ends a page view at an in-page navigation: its depth filed under the page it measured, the next one measured afresh', () => {
    frames();
    scroll(500);
    frames();
    navigate('/next');
    expect(depths()).toEqual([['/start', 50, 2000]]);
    expect(JSON.parse(String(sent[0]!.properties.page)).url).toBe(`${location.origin}/start`);
    layout(1000, 0);
    frames();
    // The same URL again is no new page view.
    window.dispatchEvent(new Event('popstate'));
    location.hash = '#part';
    window.dispatchEvent(new Event('hashchange'));
    expect(depths()).toEqual([
      ['/start', 50, 2000],
      ['/next', 50, 1000],
    ]);
    const second = JSON.parse(String(sent[1]!.properties.page));
    expect(second.referrer).toBe(`${location.origin}/start`);
  });

  it('leaves out a frame pending at the navigation: it would measure the next page', () => {
    frames();
    scroll(1500);
    navigate('/other');
    frames();
    expect(depths()).toEqual([['/start', 25, 2000]]);
  });

  it('sends nothing after stop and leaves no frame waiting', () => {
    scroll(300);
    stop!();
    stop = undefined;
    frames();
    window.dispatchEvent(new Event('pagehide'));
    navigate('/gone');
    expect(sent).toEqual([]);
  });
});
