import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../api/wire-types.js';
import { withoutFrameSources } from './frame-sources.js';

const iframe = (id: number, attributes: Record<string, unknown>) => ({ type: 2, id, tagName: 'iframe', attributes, childNodes: [] });

describe('withoutFrameSources', () => {
  it('empties the frames of full snapshots, added nodes and later attribute changes, and leaves everything else', () => {
    const events: RecordedEvent[] = [
      { type: 4, data: { href: 'https://shop.example/', width: 1280, height: 800 }, timestamp: 1 },
      {
        type: 2,
        data: {
          node: {
            type: 0,
            id: 1,
            childNodes: [
              { type: 2, id: 2, tagName: 'img', attributes: { src: 'https://shop.example/a.png' }, childNodes: [] },
              iframe(3, { src: 'https://evil.example/', srcdoc: '<p>x</p>', title: 'kept' }),
            ],
          },
          initialOffset: { top: 0, left: 0 },
        },
        timestamp: 2,
      },
      { type: 3, data: { source: 0, adds: [{ parentId: 1, node: iframe(4, { src: 'https://evil.example/2' }) }], removes: [], texts: [], attributes: [] }, timestamp: 3 },
      {
        type: 3,
        data: { source: 0, adds: [], removes: [], texts: [], attributes: [{ id: 3, attributes: { src: 'https://evil.example/3', title: 't' } }, { id: 2, attributes: { src: 'b.png' } }] },
        timestamp: 4,
      },
      { type: 3, data: { source: 2, type: 2, id: 3, x: 1, y: 2 }, timestamp: 5 },
    ];
    const out = withoutFrameSources(events);
    expect(JSON.stringify(out)).not.toContain('evil.example');
    expect(JSON.stringify(out)).not.toContain('srcdoc');
    const full = out[1]?.data as { node: { childNodes: Array<{ attributes: Record<string, unknown> }> } };
    expect(full.node.childNodes[0]?.attributes).toEqual({ src: 'https://shop.example/a.png' });
    expect(full.node.childNodes[1]?.attributes).toEqual({ title: 'kept' });
    expect((out[3]?.data as { attributes: unknown[] }).attributes).toEqual([{ id: 3, attributes: { title: 't' } }, { id: 2, attributes: { src: 'b.png' } }]);
    expect(out[0]).toBe(events[0]);
    expect(out[4]).toBe(events[4]);
    // The input is not changed.
    expect(JSON.stringify(events)).toContain('evil.example/3');
  });
});
