/** Heatmap tracking: click data, hover sampling, and removal. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SILENT } from '../logger.js';
import { HOVER_REST_MS, MAX_HOVERS_PER_MINUTE, trackHeatmap } from './heatmap.js';

let stop: (() => void) | undefined;
let sent: Array<{ name: string; properties: Record<string, unknown> }>;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  sent = [];
  stop = trackHeatmap(window, { send: (name, properties) => sent.push({ name, properties }), now: () => Date.now(), log: SILENT });
});
afterEach(() => {
  stop?.();
  vi.useRealTimers();
  document.body.innerHTML = '';
});

const move = (target: Element, x = 1, y = 2) => target.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: x, clientY: y }));

describe('trackHeatmap(win)', () => {
  it('sends click with x, y, element, selector, action and viewport', () => {
    document.body.innerHTML = '<main><button id="buy">Buy</button></main>';
    document.getElementById('buy')!.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 10, clientY: 20 }));
    expect(sent).toEqual([
      {
        name: 'click',
        properties: {
          x: 10 + window.scrollX,
          y: 20 + window.scrollY,
          element: 'button',
          selector: '#buy',
          action: 'click',
          viewport: { width: window.innerWidth, height: window.innerHeight },
        },
      },
    ]);
  });

  it('sends where in the element the click fell, as fractions of its box, clamped and rounded', () => {
    document.body.innerHTML = '<main><button id="buy">Buy</button><p id="bare">text</p></main>';
    const button = document.getElementById('buy')!;
    // happy-dom lays nothing out: the button's box is given.
    button.getBoundingClientRect = () => ({ left: 100, top: 50, width: 200, height: 40, right: 300, bottom: 90, x: 100, y: 50, toJSON: () => ({}) }) as DOMRect;
    button.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 150, clientY: 60 }));
    button.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 333, clientY: 89.99 }));
    document.getElementById('bare')!.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 1, clientY: 1 }));
    expect(sent.map((e) => [e.properties.relativeX, e.properties.relativeY])).toEqual([
      [0.25, 0.25],
      [1, 1],
      // No box (nothing laid out): no fractions rather than wrong ones.
      [undefined, undefined],
    ]);
  });

  it(`sends hover once the pointer rested ${HOVER_REST_MS} ms on an element, not per mousemove`, () => {
    document.body.innerHTML = '<p>Hello</p><h2>World</h2>';
    const p = document.querySelector('p')!;
    for (let i = 0; i < 20; i++) {
      move(p, i);
      vi.advanceTimersByTime(HOVER_REST_MS / 2);
    }
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(HOVER_REST_MS);
    expect(sent).toEqual([{ name: 'hover', properties: expect.objectContaining({ element: 'p', selector: 'body > p', action: 'move', x: 19 }) }]);
    // Resting again on the same element sends nothing; on another one, it does.
    move(p);
    vi.advanceTimersByTime(HOVER_REST_MS * 2);
    move(document.querySelector('h2')!);
    vi.advanceTimersByTime(HOVER_REST_MS);
    expect(sent.map((e) => e.properties.element)).toEqual(['p', 'h2']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it(`sends at most ${MAX_HOVERS_PER_MINUTE} hovers in any minute`, () => {
    document.body.innerHTML = '<a></a><b></b>';
    const [a, b] = [document.querySelector('a')!, document.querySelector('b')!];
    for (let i = 0; i < MAX_HOVERS_PER_MINUTE + 5; i++) {
      move(i % 2 === 0 ? a : b);
      vi.advanceTimersByTime(HOVER_REST_MS);
    }
    expect(sent).toHaveLength(MAX_HOVERS_PER_MINUTE);
  });

  it('removes its listeners and its timer on stop', () => {
    document.body.innerHTML = '<p>x</p>';
    move(document.querySelector('p')!);
    expect(vi.getTimerCount()).toBe(1);
    stop!();
    stop = undefined;
    expect(vi.getTimerCount()).toBe(0);
    document.querySelector('p')!.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    vi.advanceTimersByTime(HOVER_REST_MS * 2);
    expect(sent).toEqual([]);
  });
});
