import type { RecordedEvent } from '../api/wire-types.js';
import { type CanvasFrame, type CanvasFrames, type CanvasImage, latestFrame } from './canvas-frames.js';

/*
 * Draws a recording's canvas images (`canvas-frames.ts`) into the replay from the dashboard's own
 * page, so that the replay's frame keeps rrweb's default sandbox, in which no script runs
 * (docs/decisions.md, "Canvas recording and its replay"). That frame is of the dashboard's
 * origin, so the dashboard reaches the replayed `<canvas>` through rrweb's node mirror and draws
 * with its own 2D context; the image is decoded from its bytes (no address is loaded, in either
 * document).
 *
 * As the replay plays, each event's images are drawn when the replayer applies the event. When it
 * jumps (the timeline, a seek), it applies the events before the new moment at once, into a
 * virtual DOM that becomes the page only at the end (its `flush` event): then every canvas is
 * drawn with its latest image up to there.
 */

/** The part of rrweb's node mirror the painter reads. */
export interface NodeMirror {
  getNode(id: number): Node | null;
}

/** A replayed `<canvas>`, as far as the painter uses it (an element of the replay frame's realm). */
interface CanvasLike {
  nodeName: string;
  width: number;
  height: number;
  getContext(kind: '2d'): Pick<CanvasRenderingContext2D, 'clearRect' | 'drawImage'> | null;
}

/** What the painter needs from the browser; the defaults decode with `createImageBitmap`. */
export interface CanvasPainterDeps {
  /** Decodes an image. @default base64 → Blob → `createImageBitmap` */
  decode?: (image: CanvasImage) => Promise<ImageBitmap>;
  /** Told of an image that could not be decoded or drawn (the canvas keeps what it showed). */
  onError?: (error: unknown) => void;
}

/** The painter: an rrweb replay plugin, and what the player calls around it. */
export interface CanvasPainter {
  /** Goes into the replayer's `plugins`: it hands the painter the node mirror and each applied event. */
  plugin: {
    getMirror(mirrors: { nodeMirror: NodeMirror }): void;
    handler(event: RecordedEvent, isSync: boolean): void;
  };
  /** Call on the replayer's `flush` event: draws each canvas as of the last event applied at once. */
  caughtUp(): void;
  /** Draws nothing more. */
  stop(): void;
}

/** Decodes an image from its base64 bytes, without loading any address. */
export async function decodeImage(image: CanvasImage): Promise<ImageBitmap> {
  const text = atob(image.base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return createImageBitmap(new Blob([bytes], { type: image.type }));
}

/** A node of the replay frame is a canvas: by name, since the frame's elements are not this realm's `HTMLCanvasElement`. */
function asCanvas(node: Node | null): CanvasLike | null {
  const candidate = node as unknown as Partial<CanvasLike> | null;
  return candidate !== null && candidate.nodeName === 'CANVAS' && typeof candidate.getContext === 'function' ? (candidate as CanvasLike) : null;
}

/** A painter for `frames` (made from the events the player is given). */
export function createCanvasPainter(frames: CanvasFrames, deps: CanvasPainterDeps = {}): CanvasPainter {
  const decode = deps.decode ?? decodeImage;
  let mirror: NodeMirror | null = null;
  let stopped = false;
  /** The moment of the last event applied at once since the last flush, or null when none was. */
  let caughtUpTo: number | null = null;
  /** The frame each canvas element is to show (the latest asked for); a decode that finishes late for another frame is dropped. */
  const wanted = new WeakMap<CanvasLike, CanvasFrame>();

  /** Replaces what `canvas` shows with `bitmap` (an image replaces the whole canvas), or blanks it. */
  const draw = (canvas: CanvasLike, bitmap: ImageBitmap | null): void => {
    const context = canvas.getContext('2d');
    if (context === null) return;
    context.clearRect(0, 0, canvas.width, canvas.height);
    if (bitmap !== null) context.drawImage(bitmap, 0, 0);
  };

  const paint = (frame: CanvasFrame): void => {
    const canvas = asCanvas(mirror?.getNode(frame.canvasId) ?? null);
    if (canvas === null) return;
    wanted.set(canvas, frame);
    if (frame.image === null) {
      draw(canvas, null);
      return;
    }
    decode(frame.image).then(
      (bitmap) => {
        try {
          if (!stopped && wanted.get(canvas) === frame) draw(canvas, bitmap);
        } catch (error) {
          deps.onError?.(error);
        } finally {
          bitmap.close();
        }
      },
      (error: unknown) => {
        if (!stopped) deps.onError?.(error);
      },
    );
  };

  return {
    plugin: {
      getMirror({ nodeMirror }) {
        mirror = nodeMirror;
      },
      handler(event, isSync) {
        if (stopped) return;
        if (isSync) {
          // Applied into rrweb's virtual DOM: the canvas is drawn once the page is built (caughtUp).
          caughtUpTo = Math.max(caughtUpTo ?? -Infinity, event.timestamp);
          return;
        }
        for (const frame of frames.byEvent.get(event) ?? []) paint(frame);
      },
    },
    caughtUp() {
      const at = caughtUpTo;
      caughtUpTo = null;
      if (stopped || at === null) return;
      for (const list of frames.byCanvas.values()) {
        const frame = latestFrame(list, at);
        if (frame !== undefined) paint(frame);
      }
    },
    stop() {
      stopped = true;
    },
  };
}
