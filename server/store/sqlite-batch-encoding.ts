import type { StoredEvent, StoredRecordingChunk, WriteBatch } from './event-store.js';
import { cleanJson, cleanNullableText, cleanText, wholeMs } from './sanitize.js';
import { type BufferPoolOptions, Utf8Buffer, createBufferPool } from './utf8-buffer.js';

/*
 * How a group commit travels from the request thread to the SQLite writer thread (docs/decisions.md,
 * "Write path: each event encoded once, into reused buffers"). A structured clone writes every byte
 * it sends into new memory, on both threads, and that copy, not the walk over the values, was most
 * of its measured cost: one long string cost about as much as an array of column values. A
 * transferred ArrayBuffer is not copied at all. So the request thread writes the group's values into
 * a pooled buffer as UTF-8 (`utf8-buffer.ts`), transfers it, and the writer transfers it back with
 * its answer, to be written again: a few buffers go back and forth, and no group touches new memory.
 */

/** Values of one event in {@link EncodedBatch.bytes}: a null mask, then the 25 columns in insert order. */
export const EVENT_FIELDS = 26;
/** Columns of one recording chunk in {@link EncodedBatch.chunks}, in insert order. */
export const CHUNK_FIELDS = 10;

/** A group commit as the writer thread receives it (see above). */
export interface EncodedBatch {
  /**
   * UTF-8 text, per event {@link EVENT_FIELDS} values each followed by NUL: a bit mask of the values
   * that are null (bit k for value k; such a value is written empty), then project, event id, type,
   * user, session, timestamp, client timestamp, received at (whole ms, decimal), the properties as
   * JSON, agent, address, bot flag (0 or 1), visitor and the twelve report columns. All text is
   * cleaned (`sanitize.ts`), so none holds a NUL of its own; JSON.stringify escapes NUL too.
   */
  bytes: ArrayBuffer;
  /** Where each event's values end in `bytes`; event i starts where event i − 1 ended (the first at 0). */
  ends: number[];
  /** {@link CHUNK_FIELDS} values per chunk, the recorded events as JSON text (chunks are few and large). */
  chunks: Array<string | number | null>;
}

/** Positions in an event's values (and bits of its null mask) of the nullable columns. */
const NULLABLE = {
  userId: 4,
  sessionId: 5,
  clientTimestamp: 7,
  userAgent: 10,
  ipAddress: 11,
  visitorId: 13,
  report: 14,
} as const;

/** Report columns in insert order (`sqlite-schema.ts`, REPORT_COLUMNS). */
const REPORT_KEYS = [
  'path',
  'host',
  'referrerHost',
  'channel',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'browser',
  'os',
  'device',
  'screenClass',
  'anonymousId',
] as const;

/** A nullable text value as written into {@link EncodedBatch.bytes}: cleaned, or empty for null (the mask tells). */
function part(value: string | null): string {
  return value === null ? '' : cleanText(value);
}

/** One event's values as text, each followed by NUL (the layout of {@link EncodedBatch.bytes}). */
export function eventText(e: StoredEvent): string {
  let mask =
    (e.userId === null ? 1 << NULLABLE.userId : 0) |
    (e.sessionId === null ? 1 << NULLABLE.sessionId : 0) |
    (e.clientTimestamp === null ? 1 << NULLABLE.clientTimestamp : 0) |
    (e.userAgent === null ? 1 << NULLABLE.userAgent : 0) |
    (e.ipAddress === null ? 1 << NULLABLE.ipAddress : 0) |
    (e.visitorId === null ? 1 << NULLABLE.visitorId : 0);
  let report = '';
  const d = e.dimensions;
  for (let k = 0; k < REPORT_KEYS.length; k++) {
    const value = d === undefined ? null : d[REPORT_KEYS[k] as (typeof REPORT_KEYS)[number]];
    if (value === null) mask |= 1 << (NULLABLE.report + k);
    report += `${part(value)}\0`;
  }
  const clientTimestamp = e.clientTimestamp === null ? '' : wholeMs(e.clientTimestamp);
  return `${mask}\0${cleanText(e.projectId)}\0${cleanText(e.eventId)}\0${cleanText(e.eventType)}\0${part(e.userId)}\0${part(
    e.sessionId,
  )}\0${wholeMs(e.timestamp)}\0${clientTimestamp}\0${wholeMs(e.receivedAt)}\0${cleanJson(JSON.stringify(e.properties))}\0${part(
    e.userAgent,
  )}\0${part(e.ipAddress)}\0${e.isBot ? 1 : 0}\0${part(e.visitorId)}\0${report}`;
}

function chunkValues(chunks: readonly StoredRecordingChunk[]): Array<string | number | null> {
  const ch = new Array<string | number | null>(chunks.length * CHUNK_FIELDS);
  let j = 0;
  for (const c of chunks) {
    ch[j++] = cleanText(c.projectId);
    ch[j++] = cleanText(c.sessionId);
    ch[j++] = c.eventOffset;
    ch[j++] = cleanJson(c.eventsJson);
    ch[j++] = c.eventCount;
    ch[j++] = c.duration;
    ch[j++] = cleanNullableText(c.startUrl);
    ch[j++] = cleanNullableText(c.userId);
    ch[j++] = c.isFinal ? 1 : 0;
    ch[j++] = wholeMs(c.receivedAt);
  }
  return ch;
}

/** Encodes group commits into reused buffers; see the top of this file. */
export interface BatchEncoder {
  /** The group as the writer reads it, in a buffer of the pool (or a new one when none is free). */
  encode(batch: WriteBatch): EncodedBatch;
  /** Gives a buffer back to the pool once the writer returned it. */
  recycle(bytes: ArrayBuffer): void;
}

/** Creates a {@link BatchEncoder} with its pool of buffers. */
export function createBatchEncoder(options: BufferPoolOptions = {}): BatchEncoder {
  const pool = createBufferPool(options);
  return {
    encode(batch) {
      const out = new Utf8Buffer(pool.take());
      const ends = new Array<number>(batch.events.length);
      for (let i = 0; i < batch.events.length; i++) ends[i] = out.append(eventText(batch.events[i] as StoredEvent));
      return { bytes: out.arrayBuffer, ends, chunks: chunkValues(batch.chunks) };
    },
    recycle: (bytes) => pool.give(bytes),
  };
}
