/**
 * The numbering of a session's recorded events, kept in the page's storage so it outlives the
 * page and its worker. Each batch the recorder hands to the worker reserves the next indexes; the
 * first one travels as `RecordingMeta.offset` and becomes the chunk's `event_offset`
 * (`worker/recording-uploader.ts`). A recording continued in the same session after a reload, a
 * worker restart or in another tab therefore never reuses an offset, which the server (unique on
 * session and event_offset) would drop. A reservation is one storage read and write per batch
 * (about one a second while recording), never per event.
 */
import type { KeyValueStore } from '../session/storage.js';

/** Sessions remembered; the least recently used is forgotten first. */
export const REMEMBERED_SESSIONS = 8;

/** What a reservation answers: where the batch starts, and where the session's recording began. */
export interface Reservation {
  offset: number;
  /** When the session's recording began (ms), for each chunk's `duration`. */
  startedAt: number;
  /** The URL where the session's recording began (`start_url`). */
  startUrl: string;
}

/** The numbering of one project's recordings. */
export interface RecordingOffsets {
  /** Reserves `count` indexes of `sessionId`'s recording. */
  reserve(sessionId: string, count: number): Reservation;
}

/** [next index, startedAt, startUrl, last used] */
type Entry = [number, number, string, number];

/**
 * Creates the numbering over `store` at `key`.
 * @param now - the clock, for `startedAt` and the least-recently-used order
 * @param url - the page's address now, the `start_url` of a recording that begins now
 */
export function createRecordingOffsets(store: KeyValueStore, key: string, now: () => number, url: () => string): RecordingOffsets {
  function read(): Record<string, Entry> {
    try {
      const value: unknown = JSON.parse(store.get(key) ?? '{}');
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, Entry>) : {};
    } catch {
      return {};
    }
  }

  return {
    reserve(sessionId, count) {
      const entries = read();
      const at = now();
      const found = entries[sessionId];
      const entry: Entry =
        Array.isArray(found) && Number.isSafeInteger(found[0]) && found[0] >= 0
          ? [found[0], Number(found[1]) || at, String(found[2] ?? ''), at]
          : [0, at, url(), at];
      const reservation: Reservation = { offset: entry[0], startedAt: entry[1], startUrl: entry[2] };
      entry[0] += count;
      entries[sessionId] = entry;
      const ids = Object.keys(entries);
      if (ids.length > REMEMBERED_SESSIONS) {
        ids.sort((a, b) => (entries[a]?.[3] ?? 0) - (entries[b]?.[3] ?? 0));
        for (const id of ids.slice(0, ids.length - REMEMBERED_SESSIONS)) delete entries[id];
      }
      store.set(key, JSON.stringify(entries));
      return reservation;
    },
  };
}
