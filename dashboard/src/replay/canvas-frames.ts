import type { RecordedEvent } from '../api/wire-types.js';

/*
 * A recording's canvas images, read out of its events so that the dashboard draws them itself
 * (`canvas-painter.ts`) and rrweb's replayer never has to: rrweb draws canvas images only from
 * scripts it runs inside the replay's frame, which would have to be allowed to run script
 * (docs/decisions.md, "Canvas recording and its replay").
 *
 * What the recorder makes with `recordCanvas` (`main/recorder/capture-options.ts`: rrweb's canvas
 * sampling at a frame rate, WebP images) and nothing else is read:
 * - a snapshot of a `<canvas>` (a full snapshot, or a node added later) carries the canvas as it
 *   was in `rr_dataURL`, a `data:image/…;base64,` address, or nothing when it was blank;
 * - each later image is a canvas record of two commands, `clearRect(0, 0, w, h)` then
 *   `drawImage` of an ImageBitmap made of one Blob at (0, 0).
 * Either way an image replaces the whole canvas, so the canvas at a moment is its latest image
 * before it. Any other canvas record (rrweb's mode that records every drawing call, WebGL) is not
 * drawn, and an image of another type than WebP, PNG or JPEG is not drawn either.
 */

/** rrweb's event types and incremental sources read here (rrweb's `EventType`, `IncrementalSource`). */
const FULL_SNAPSHOT = 2;
const INCREMENTAL_SNAPSHOT = 3;
const MUTATION = 0;
const CANVAS_MUTATION = 9;
/** rrweb's `CanvasContext['2D']`. */
const CONTEXT_2D = 0;
/** rrweb-snapshot's node type of an element. */
const ELEMENT_NODE = 2;

/** The image types a browser's canvas encoder makes; nothing else is decoded. */
const IMAGE_TYPES = new Set(['image/webp', 'image/png', 'image/jpeg']);

/** An encoded image of a whole canvas. */
export interface CanvasImage {
  /** Its media type: `image/webp`, `image/png` or `image/jpeg`. */
  type: string;
  /** Its bytes, base64-encoded. */
  base64: string;
}

/** What one canvas shows from a moment on. */
export interface CanvasFrame {
  /** The canvas's node id in the recording. */
  canvasId: number;
  /** When (the event's timestamp, ms since the epoch). */
  timestamp: number;
  /** The image, or null for a canvas snapshotted blank (its rebuilt element is blank too). */
  image: CanvasImage | null;
}

/** A recording's canvas images, and its events as the player is to get them. */
export interface CanvasFrames {
  /** The events, `rr_dataURL` taken out of every canvas snapshot (events without one are the same objects). */
  events: RecordedEvent[];
  /** The frames each of those events brings, by event object. */
  byEvent: Map<RecordedEvent, CanvasFrame[]>;
  /** Each canvas's frames, in time order. */
  byCanvas: Map<number, CanvasFrame[]>;
}

interface SerializedNode {
  id?: unknown;
  type?: unknown;
  tagName?: unknown;
  attributes?: Record<string, unknown>;
  childNodes?: unknown;
}

/** `data:image/webp;base64,…` as an image, or null when it is not an image of a type we draw. */
export function imageOfDataUrl(value: unknown): CanvasImage | null {
  if (typeof value !== 'string' || !value.startsWith('data:')) return null;
  const comma = value.indexOf(',');
  const header = comma < 0 ? '' : value.slice(5, comma);
  const [type, encoding, ...rest] = header.split(';');
  if (type === undefined || !IMAGE_TYPES.has(type) || encoding !== 'base64' || rest.length > 0) return null;
  return { type, base64: value.slice(comma + 1) };
}

/** The image of an rrweb canvas record in the shape the recorder's canvas sampling makes, or undefined. */
export function imageOfCanvasRecord(data: unknown): CanvasImage | undefined {
  const record = data as { type?: unknown; commands?: unknown } | null;
  if (record === null || typeof record !== 'object' || record.type !== CONTEXT_2D || !Array.isArray(record.commands) || record.commands.length !== 2) return undefined;
  const [clear, draw] = record.commands as Array<{ property?: unknown; args?: unknown } | null>;
  if (clear?.property !== 'clearRect' || !isNumbers(clear.args, 4) || clear.args[0] !== 0 || clear.args[1] !== 0) return undefined;
  if (draw?.property !== 'drawImage' || !Array.isArray(draw.args) || draw.args.length !== 3 || draw.args[1] !== 0 || draw.args[2] !== 0) return undefined;
  const bitmap = draw.args[0] as { rr_type?: unknown; args?: unknown } | null;
  if (bitmap?.rr_type !== 'ImageBitmap' || !Array.isArray(bitmap.args) || bitmap.args.length !== 1) return undefined;
  const blob = bitmap.args[0] as { rr_type?: unknown; type?: unknown; data?: unknown } | null;
  if (blob?.rr_type !== 'Blob' || typeof blob.type !== 'string' || !IMAGE_TYPES.has(blob.type) || !Array.isArray(blob.data) || blob.data.length !== 1) return undefined;
  const buffer = blob.data[0] as { rr_type?: unknown; base64?: unknown } | null;
  if (buffer?.rr_type !== 'ArrayBuffer' || typeof buffer.base64 !== 'string') return undefined;
  return { type: blob.type, base64: buffer.base64 };
}

function isNumbers(value: unknown, length: number): value is number[] {
  return Array.isArray(value) && value.length === length && value.every((n) => typeof n === 'number');
}

/**
 * Notes a frame for every canvas in `node` (recursively) at `timestamp`, and returns the node
 * without their `rr_dataURL` (the same object when it had none).
 */
function takeCanvasImages(node: SerializedNode, timestamp: number, frames: CanvasFrame[]): SerializedNode {
  let out = node;
  if (node.type === ELEMENT_NODE && typeof node.tagName === 'string' && node.tagName.toLowerCase() === 'canvas' && typeof node.id === 'number') {
    const attributes = node.attributes ?? {};
    frames.push({ canvasId: node.id, timestamp, image: imageOfDataUrl(attributes.rr_dataURL) });
    if ('rr_dataURL' in attributes) {
      const { rr_dataURL: _taken, ...kept } = attributes;
      out = { ...node, attributes: kept };
    }
  }
  if (Array.isArray(node.childNodes)) {
    const children = node.childNodes as SerializedNode[];
    const taken = children.map((child) => (child !== null && typeof child === 'object' ? takeCanvasImages(child, timestamp, frames) : child));
    if (taken.some((child, i) => child !== children[i])) out = { ...out, childNodes: taken };
  }
  return out;
}

/** The frames `event` brings and the event as the player is to get it. */
function readEvent(event: RecordedEvent): { event: RecordedEvent; frames: CanvasFrame[] } {
  const frames: CanvasFrame[] = [];
  const data = event.data as { node?: unknown; source?: unknown; id?: unknown; adds?: unknown } | null;
  if (data === null || typeof data !== 'object') return { event, frames };
  if (event.type === FULL_SNAPSHOT && data.node !== null && typeof data.node === 'object') {
    const node = takeCanvasImages(data.node as SerializedNode, event.timestamp, frames);
    return { event: node === data.node ? event : { ...event, data: { ...data, node } }, frames };
  }
  if (event.type !== INCREMENTAL_SNAPSHOT) return { event, frames };
  if (data.source === CANVAS_MUTATION && typeof data.id === 'number') {
    const image = imageOfCanvasRecord(data);
    if (image !== undefined) frames.push({ canvasId: data.id, timestamp: event.timestamp, image });
    return { event, frames };
  }
  if (data.source === MUTATION && Array.isArray(data.adds)) {
    const adds = data.adds as Array<{ node?: unknown } | null>;
    const taken = adds.map((add) =>
      add !== null && typeof add === 'object' && add.node !== null && typeof add.node === 'object'
        ? (() => {
            const node = takeCanvasImages(add.node as SerializedNode, event.timestamp, frames);
            return node === add.node ? add : { ...add, node };
          })()
        : add,
    );
    return { event: taken.some((add, i) => add !== adds[i]) ? { ...event, data: { ...data, adds: taken } } : event, frames };
  }
  return { event, frames };
}

/** Reads a recording's canvas images (see the top of the file). */
export function canvasFrames(events: readonly RecordedEvent[]): CanvasFrames {
  const byEvent = new Map<RecordedEvent, CanvasFrame[]>();
  const byCanvas = new Map<number, CanvasFrame[]>();
  const out = events.map((original) => {
    const { event, frames } = readEvent(original);
    if (frames.length > 0) byEvent.set(event, frames);
    for (const frame of frames) {
      const list = byCanvas.get(frame.canvasId);
      if (list === undefined) byCanvas.set(frame.canvasId, [frame]);
      else list.push(frame);
    }
    return event;
  });
  // The player orders events by time (stably), so the frames of one canvas are put in that order too.
  for (const list of byCanvas.values()) list.sort((a, b) => a.timestamp - b.timestamp);
  return { events: out, byEvent, byCanvas };
}

/** The latest of `frames` (in time order) at or before `timestamp`, or undefined when none is. */
export function latestFrame(frames: readonly CanvasFrame[], timestamp: number): CanvasFrame | undefined {
  let low = 0;
  let high = frames.length;
  // The first frame after `timestamp`, by bisection; the one before it is the answer.
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((frames[middle] as CanvasFrame).timestamp <= timestamp) low = middle + 1;
    else high = middle;
  }
  return low === 0 ? undefined : frames[low - 1];
}
