/** Click placement on a rendered page, and the choice of the recording that shows it. */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent, WireEvent } from '../api/wire-types.js';
import { placeClicks } from './place-clicks.js';
import { SETTLE_MS, chooseRecordedPageView, snapshotMoment } from './snapshot-choice.js';

afterEach(() => {
  document.body.innerHTML = '';
});

/** happy-dom lays nothing out: an element's box is given. */
function box(element: Element, left: number, top: number, width: number, height: number): void {
  element.getBoundingClientRect = () => ({ left, top, width, height, right: left + width, bottom: top + height, x: left, y: top, toJSON: () => ({}) }) as DOMRect;
}

describe('placeClicks(doc, elements, grid)', () => {
  it("puts each cell's clicks at the cell's centre inside the element's box, wherever the element is laid out", () => {
    document.body.innerHTML = '<main><button id="buy">Buy</button><a data-testid="more">More</a></main>';
    box(document.getElementById('buy')!, 100, 50, 200, 40);
    box(document.querySelector('a')!, 0, 500, 10, 10);
    const placed = placeClicks(
      document,
      [
        { selector: '#buy', count: 5, cells: [{ x: 0, y: 0, count: 2 }, { x: 9, y: 4, count: 3 }] },
        { selector: 'a[data-testid="more"]', count: 1, cells: [{ x: 5, y: 5, count: 1 }] },
        { selector: '#gone', count: 4, cells: [{ x: 1, y: 1, count: 4 }] },
        { selector: 'not a [valid selector', count: 1, cells: [] },
        { selector: '', count: 1, cells: [{ x: 1, y: 1, count: 1 }] },
      ],
      10,
    );
    expect(placed.spots).toEqual([
      { x: 110, y: 52, count: 2, selector: '#buy' },
      { x: 290, y: 68, count: 3, selector: '#buy' },
      { x: 5.5, y: 505.5, count: 1, selector: 'a[data-testid="more"]' },
    ]);
    expect(placed.unplaced).toEqual(['#gone', 'not a [valid selector', '']);
    expect(placed.max).toBe(3);
  });
});

const pageView = (session: string | null, timestamp: string | null, url = 'https://shop.example/pricing'): WireEvent => ({
  event_id: 'e',
  event_type: 'page_view',
  user_id: null,
  session_id: session,
  timestamp,
  received_at: null,
  properties: { page: JSON.stringify({ url, path: '/pricing' }) },
  user_agent: null,
});

describe('chooseRecordedPageView(pageViews, recorded) and snapshotMoment(events, at)', () => {
  it('takes the latest page view whose session was recorded, and pauses just after it, in the recorded viewport', () => {
    const chosen = chooseRecordedPageView(
      [pageView('s9', '2026-01-05T10:00:05.000Z'), pageView(null, '2026-01-05T10:00:04.000Z'), pageView('s2', '2026-01-05T10:00:02.000Z'), pageView('s1', '2026-01-05T10:00:01.000Z')],
      new Set(['s1', 's2']),
    );
    expect(chosen).toEqual({ sessionId: 's2', at: Date.parse('2026-01-05T10:00:02.000Z'), url: 'https://shop.example/pricing' });
    const at = chosen!.at;
    const events: RecordedEvent[] = [
      { type: 4, data: { href: 'x', width: 1280, height: 800 }, timestamp: at - 5000 },
      { type: 2, data: {}, timestamp: at - 4999 },
      { type: 4, data: { href: 'x', width: 390, height: 844 }, timestamp: at + SETTLE_MS + 1 },
      { type: 3, data: {}, timestamp: at + 60_000 },
    ];
    expect(snapshotMoment(events, at)).toEqual({ offsetMs: 5000 + SETTLE_MS, width: 1280, height: 800 });
    // A page view near the recording's end pauses at its last event.
    expect(snapshotMoment(events, at + 59_000)?.offsetMs).toBe(65_000);
  });

  it('finds nothing to draw without a recorded session or a full snapshot', () => {
    expect(chooseRecordedPageView([pageView('s1', '2026-01-05T10:00:01.000Z')], new Set(['s2']))).toBeNull();
    expect(snapshotMoment([{ type: 4, data: { width: 1, height: 1 }, timestamp: 1 }, { type: 3, data: {}, timestamp: 2 }], 1)).toBeNull();
    expect(snapshotMoment([], 1)).toBeNull();
  });
});
