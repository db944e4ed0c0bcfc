import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../api/wire-types.js';
import { type CanvasFrame, canvasFrames, imageOfCanvasRecord, imageOfDataUrl, latestFrame } from './canvas-frames.js';

/** A canvas record as rrweb's canvas sampling makes it (the recorder's `recordCanvas`). */
const sampled = (id: number, base64: string, type = 'image/webp') => ({
  source: 9,
  id,
  type: 0,
  commands: [
    { property: 'clearRect', args: [0, 0, 160, 90] },
    { property: 'drawImage', args: [{ rr_type: 'ImageBitmap', args: [{ rr_type: 'Blob', data: [{ rr_type: 'ArrayBuffer', base64 }], type }] }, 0, 0] },
  ],
});

const canvas = (id: number, attributes: Record<string, unknown>) => ({ type: 2, id, tagName: 'canvas', attributes, childNodes: [] });

describe('imageOfDataUrl', () => {
  it('reads base64 WebP, PNG and JPEG addresses', () => {
    expect(imageOfDataUrl('data:image/webp;base64,UklGRg==')).toEqual({ type: 'image/webp', base64: 'UklGRg==' });
    expect(imageOfDataUrl('data:image/png;base64,iVBO')).toEqual({ type: 'image/png', base64: 'iVBO' });
    expect(imageOfDataUrl('data:image/jpeg;base64,/9j/')).toEqual({ type: 'image/jpeg', base64: '/9j/' });
  });

  it.each([
    ['an SVG image', 'data:image/svg+xml;base64,PHN2Zz4='],
    ['an HTML page', 'data:text/html;base64,PHNjcmlwdD4='],
    ['an image not in base64', 'data:image/png,abc'],
    ['a parameter besides base64', 'data:image/png;charset=utf-8;base64,abc'],
    ['an https address', 'https://evil.example/a.png'],
    ['a javascript: address', 'javascript:alert(1)'],
    ['no comma', 'data:image/png;base64'],
    ['a number', 42],
  ])('refuses %s', (_name, value) => {
    expect(imageOfDataUrl(value)).toBeNull();
  });
});

describe('imageOfCanvasRecord', () => {
  it('reads the image of a sampled canvas record', () => {
    expect(imageOfCanvasRecord(sampled(7, 'AAAA'))).toEqual({ type: 'image/webp', base64: 'AAAA' });
    expect(imageOfCanvasRecord(sampled(7, 'AAAA', 'image/png'))).toEqual({ type: 'image/png', base64: 'AAAA' });
  });

  it.each([
    ['a record of drawing calls (rrweb without sampling)', { source: 9, id: 7, type: 0, property: 'fillRect', args: [0, 0, 10, 10] }],
    ['a WebGL record', { ...sampled(7, 'AAAA'), type: 1 }],
    ['an SVG image', sampled(7, 'AAAA', 'image/svg+xml')],
    ['a third command', { ...sampled(7, 'AAAA'), commands: [...sampled(7, 'AAAA').commands, { property: 'fillRect', args: [0, 0, 1, 1] }] }],
    ['an image drawn elsewhere than (0, 0)', { ...sampled(7, 'AAAA'), commands: [sampled(7, 'AAAA').commands[0], { property: 'drawImage', args: [{}, 5, 0] }] }],
    ['a command other than clearRect first', { ...sampled(7, 'AAAA'), commands: [{ property: 'fillRect', args: [0, 0, 1, 1] }, sampled(7, 'AAAA').commands[1]] }],
    ['no bytes', { ...sampled(7, 'AAAA'), commands: [sampled(7, 'AAAA').commands[0], { property: 'drawImage', args: [{ rr_type: 'ImageBitmap', args: [{ rr_type: 'Blob', data: [], type: 'image/webp' }] }, 0, 0] }] }],
    ['null', null],
  ])('leaves out %s', (_name, data) => {
    expect(imageOfCanvasRecord(data)).toBeUndefined();
  });
});

describe('canvasFrames(events)', () => {
  const snapshot: RecordedEvent = {
    type: 2,
    data: {
      node: {
        type: 0,
        id: 1,
        childNodes: [
          {
            type: 2,
            id: 2,
            tagName: 'body',
            attributes: {},
            childNodes: [canvas(3, { width: '160', rr_dataURL: 'data:image/webp;base64,RED=' }), canvas(4, { width: '10' }), { type: 2, id: 5, tagName: 'img', attributes: { rr_dataURL: 'data:image/png;base64,IMG=' }, childNodes: [] }],
          },
        ],
      },
      initialOffset: { top: 0, left: 0 },
    },
    timestamp: 100,
  };
  const meta: RecordedEvent = { type: 4, data: { href: 'https://shop.example/', width: 1280, height: 800 }, timestamp: 90 };
  const move: RecordedEvent = { type: 3, data: { source: 1, positions: [{ x: 1, y: 2, id: 2, timeOffset: 0 }] }, timestamp: 150 };
  const green: RecordedEvent = { type: 3, data: sampled(3, 'GREEN='), timestamp: 200 };
  const added: RecordedEvent = { type: 3, data: { source: 0, adds: [{ parentId: 2, nextId: null, node: canvas(6, { rr_dataURL: 'data:image/png;base64,NEW=' }) }], removes: [], texts: [], attributes: [] }, timestamp: 250 };
  const blue: RecordedEvent = { type: 3, data: sampled(3, 'BLUE='), timestamp: 300 };
  const calls: RecordedEvent = { type: 3, data: { source: 9, id: 4, type: 0, property: 'fillRect', args: [0, 0, 1, 1] }, timestamp: 310 };

  it('notes each canvas image with its canvas and moment, a blank snapshot as null, and nothing for other records', () => {
    const { byCanvas } = canvasFrames([meta, snapshot, move, green, added, blue, calls]);
    expect(Object.fromEntries(byCanvas)).toEqual({
      3: [
        { canvasId: 3, timestamp: 100, image: { type: 'image/webp', base64: 'RED=' } },
        { canvasId: 3, timestamp: 200, image: { type: 'image/webp', base64: 'GREEN=' } },
        { canvasId: 3, timestamp: 300, image: { type: 'image/webp', base64: 'BLUE=' } },
      ],
      4: [{ canvasId: 4, timestamp: 100, image: null }],
      6: [{ canvasId: 6, timestamp: 250, image: { type: 'image/png', base64: 'NEW=' } }],
    });
  });

  it('hands the player the events without the canvases’ rr_dataURL, the others as they were (an image’s rr_dataURL too)', () => {
    const input = [meta, snapshot, move, green, added, blue, calls];
    const { events, byEvent } = canvasFrames(input);
    expect(events).toHaveLength(input.length);
    for (const i of [0, 2, 3, 5, 6]) expect(events[i]).toBe(input[i]);
    const text = JSON.stringify(events);
    expect(text).not.toContain('RED=');
    expect(text).not.toContain('NEW=');
    expect(text).toContain('IMG=');
    expect(text).toContain('"width":"160"');
    // The input is left as it was.
    expect(JSON.stringify(input)).toContain('RED=');
    // Frames are found by the event objects the player gets.
    expect(byEvent.get(events[1] as RecordedEvent)?.map((f) => f.canvasId)).toEqual([3, 4]);
    expect(byEvent.get(events[3] as RecordedEvent)?.map((f) => f.image?.base64)).toEqual(['GREEN=']);
    expect(byEvent.get(events[4] as RecordedEvent)?.map((f) => f.canvasId)).toEqual([6]);
    expect(byEvent.has(events[2] as RecordedEvent)).toBe(false);
    expect(byEvent.has(events[6] as RecordedEvent)).toBe(false);
  });

  it('orders a canvas’s frames by time when the events arrived out of order, as the player orders them', () => {
    const { byCanvas } = canvasFrames([meta, snapshot, blue, green]);
    expect(byCanvas.get(3)?.map((f) => f.timestamp)).toEqual([100, 200, 300]);
  });

  it('takes events that are not objects or have no node without failing', () => {
    const odd: RecordedEvent[] = [
      { type: 2, data: null, timestamp: 1 },
      { type: 2, data: { node: 'x' }, timestamp: 2 },
      { type: 3, data: { source: 0, adds: [null, { node: null }] }, timestamp: 3 },
      { type: 3, data: { source: 9 }, timestamp: 4 },
    ];
    const { events, byCanvas } = canvasFrames(odd);
    expect(events).toEqual(odd);
    expect(byCanvas.size).toBe(0);
  });
});

describe('latestFrame(frames, timestamp)', () => {
  const frame = (timestamp: number): CanvasFrame => ({ canvasId: 1, timestamp, image: { type: 'image/webp', base64: String(timestamp) } });
  const frames = [frame(100), frame(200), frame(200), frame(300)];

  it('is the last frame at or before the moment', () => {
    expect(latestFrame(frames, 100)).toBe(frames[0]);
    expect(latestFrame(frames, 199)).toBe(frames[0]);
    expect(latestFrame(frames, 200)).toBe(frames[2]);
    expect(latestFrame(frames, 299)).toBe(frames[2]);
    expect(latestFrame(frames, 300)).toBe(frames[3]);
    expect(latestFrame(frames, 10_000)).toBe(frames[3]);
  });

  it('is undefined before the first frame or without frames', () => {
    expect(latestFrame(frames, 99)).toBeUndefined();
    expect(latestFrame([], 100)).toBeUndefined();
  });
});
