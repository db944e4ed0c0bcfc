import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../api/wire-types.js';
import { canvasFrames } from './canvas-frames.js';
import { createCanvasPainter } from './canvas-painter.js';
import type { CanvasImage } from './canvas-frames.js';

/** A canvas record as rrweb's canvas sampling makes it, its bytes standing for a colour. */
const sampled = (id: number, colour: string, timestamp: number): RecordedEvent => ({
  type: 3,
  data: {
    source: 9,
    id,
    type: 0,
    commands: [
      { property: 'clearRect', args: [0, 0, 160, 90] },
      { property: 'drawImage', args: [{ rr_type: 'ImageBitmap', args: [{ rr_type: 'Blob', data: [{ rr_type: 'ArrayBuffer', base64: colour }], type: 'image/webp' }] }, 0, 0] },
    ],
  },
  timestamp,
});

const snapshot = (timestamp: number, dataUrl?: string): RecordedEvent => ({
  type: 2,
  data: { node: { type: 0, id: 1, childNodes: [{ type: 2, id: 3, tagName: 'canvas', attributes: dataUrl === undefined ? {} : { rr_dataURL: dataUrl }, childNodes: [] }] }, initialOffset: { top: 0, left: 0 } },
  timestamp,
});

/** A stand-in for a replayed canvas: what it shows, as a list of what was done to it. */
function fakeCanvas() {
  const log: string[] = [];
  return {
    log,
    nodeName: 'CANVAS',
    width: 160,
    height: 90,
    getContext: () => ({
      clearRect: () => log.push('clear'),
      drawImage: (bitmap: unknown) => log.push(`draw ${(bitmap as { colour: string }).colour}`),
    }),
  };
}

/** Decodes to `{ colour }` when told to, in any order the test picks. */
function controlledDecoder() {
  const pending: Array<{ image: CanvasImage; resolve: (b: ImageBitmap) => void; reject: (e: unknown) => void }> = [];
  const closed: string[] = [];
  const decode = (image: CanvasImage) =>
    new Promise<ImageBitmap>((resolve, reject) => pending.push({ image, resolve, reject }));
  const finish = async (colour: string) => {
    const index = pending.findIndex((p) => p.image.base64 === colour);
    const [entry] = pending.splice(index, 1);
    entry?.resolve({ colour, close: () => closed.push(colour) } as unknown as ImageBitmap);
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { decode, pending, closed, finish };
}

function setUp(events: RecordedEvent[]) {
  const frames = canvasFrames(events);
  const decoder = controlledDecoder();
  const errors: unknown[] = [];
  const painter = createCanvasPainter(frames, { decode: decoder.decode, onError: (e) => errors.push(e) });
  let node = fakeCanvas();
  painter.plugin.getMirror({ nodeMirror: { getNode: (id) => (id === 3 ? (node as unknown as Node) : null) } });
  return {
    painter,
    decoder,
    errors,
    events: frames.events,
    canvas: () => node,
    /** A rebuild: the replayer's mirror now holds a new, blank canvas. */
    rebuild: () => (node = fakeCanvas()),
  };
}

describe('createCanvasPainter', () => {
  const events = [snapshot(100, 'data:image/webp;base64,RED'), sampled(3, 'GREEN', 200), sampled(3, 'BLUE', 300)];

  it('draws each image as the replay applies its event, replacing what the canvas showed', async () => {
    const { painter, decoder, events: played, canvas } = setUp(events);
    for (const [k, colour] of ['RED', 'GREEN', 'BLUE'].entries()) {
      painter.plugin.handler(played[k] as RecordedEvent, false);
      expect(decoder.pending.map((p) => p.image.base64)).toEqual([colour]);
      await decoder.finish(colour);
    }
    expect(canvas().log).toEqual(['clear', 'draw RED', 'clear', 'draw GREEN', 'clear', 'draw BLUE']);
    expect(decoder.closed).toEqual(['RED', 'GREEN', 'BLUE']);
  });

  it('drops an image decoded after a later one was asked for, so the canvas ends on the latest', async () => {
    const { painter, decoder, events: played, canvas } = setUp(events);
    painter.plugin.handler(played[1] as RecordedEvent, false);
    painter.plugin.handler(played[2] as RecordedEvent, false);
    await decoder.finish('BLUE');
    await decoder.finish('GREEN');
    expect(canvas().log).toEqual(['clear', 'draw BLUE']);
    expect(decoder.closed).toEqual(['BLUE', 'GREEN']);
  });

  it('draws nothing for events applied at once (a jump) until the replay has caught up, then the latest image up to there', async () => {
    const { painter, decoder, events: played, canvas, rebuild } = setUp(events);
    rebuild();
    painter.plugin.handler(played[0] as RecordedEvent, true);
    painter.plugin.handler(played[1] as RecordedEvent, true);
    expect(decoder.pending).toEqual([]);
    painter.caughtUp();
    expect(decoder.pending.map((p) => p.image.base64)).toEqual(['GREEN']);
    await decoder.finish('GREEN');
    expect(canvas().log).toEqual(['clear', 'draw GREEN']);
    // A jump back before the first image's successor: the snapshot's image, on the canvas rebuilt for it.
    rebuild();
    painter.plugin.handler(played[0] as RecordedEvent, true);
    painter.caughtUp();
    await decoder.finish('RED');
    expect(canvas().log).toEqual(['clear', 'draw RED']);
    // A flush with nothing applied at once (a play from where the replay was) draws nothing.
    painter.caughtUp();
    expect(decoder.pending).toEqual([]);
  });

  it('blanks a canvas whose latest snapshot was blank', () => {
    const { painter, events: played, canvas } = setUp([snapshot(100), sampled(3, 'GREEN', 200)]);
    painter.plugin.handler(played[0] as RecordedEvent, true);
    painter.caughtUp();
    expect(canvas().log).toEqual(['clear']);
  });

  it('reports an image that cannot be decoded and keeps what the canvas showed', async () => {
    const { painter, decoder, events: played, canvas, errors } = setUp(events);
    painter.plugin.handler(played[1] as RecordedEvent, false);
    decoder.pending[0]?.reject(new Error('The source image could not be decoded.'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(errors).toHaveLength(1);
    expect(canvas().log).toEqual([]);
  });

  it('draws nothing once stopped', async () => {
    const { painter, decoder, events: played, canvas } = setUp(events);
    painter.plugin.handler(played[1] as RecordedEvent, false);
    painter.stop();
    painter.plugin.handler(played[2] as RecordedEvent, false);
    await decoder.finish('GREEN');
    expect(canvas().log).toEqual([]);
    expect(decoder.pending).toEqual([]);
    expect(decoder.closed).toEqual(['GREEN']);
  });

  it('leaves a node that is not a canvas alone', () => {
    const frames = canvasFrames(events);
    const decoder = controlledDecoder();
    const painter = createCanvasPainter(frames, { decode: decoder.decode });
    const div = { nodeName: 'DIV', getContext: () => null };
    painter.plugin.getMirror({ nodeMirror: { getNode: () => div as unknown as Node } });
    for (const event of frames.events) painter.plugin.handler(event, false);
    expect(decoder.pending).toEqual([]);
  });
});
