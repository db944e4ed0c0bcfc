import { StoreError } from '../store-error.js';

/** The position of the last event of a page: events sort newest first by `(timestamp, eventId)`. */
export interface EventCursor {
  timestamp: number;
  eventId: string;
}

/**
 * Encodes a page position as an opaque token (base64url of `timestamp:eventId`). Keyset paging
 * rather than offsets keeps pages stable while events are inserted.
 */
export function encodeEventCursor(cursor: EventCursor): string {
  return Buffer.from(`${cursor.timestamp}:${cursor.eventId}`, 'utf8').toString('base64url');
}

/** Decodes a token made by {@link encodeEventCursor}; throws `StoreError('INVALID_CURSOR')` otherwise. */
export function decodeEventCursor(token: string): EventCursor {
  const text = /^[A-Za-z0-9_-]{1,2000}$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  const colon = text.indexOf(':');
  const timestamp = colon > 0 ? Number(text.slice(0, colon)) : Number.NaN;
  const eventId = text.slice(colon + 1);
  if (!Number.isSafeInteger(timestamp) || eventId.length === 0 || encodeEventCursor({ timestamp, eventId }) !== token) {
    throw new StoreError('INVALID_CURSOR', 'The cursor is not one this server issued.');
  }
  return { timestamp, eventId };
}

/** Page sizes the stores accept: the interface promises 1–1000. */
export function clampPageLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 1000;
  return Math.min(1000, Math.max(1, Math.floor(limit)));
}

/** Largest |time| a Date can hold, ms; also well inside BIGINT and exact in a double. */
export const MAX_TIME = 8.64e15;

/**
 * A `from` / `to` bound as a whole number of ms with the same meaning: stored times are whole
 * ms, so `t >= x` ⇔ `t >= ceil(x)` and `t < x` ⇔ `t < ceil(x)`. Clamped to the Date range so that
 * PostgreSQL's BIGINT never sees a fraction, NaN or an infinity.
 */
export function timeBound(value: number): number {
  if (Number.isNaN(value)) return MAX_TIME;
  return Math.min(MAX_TIME, Math.max(-MAX_TIME, Math.ceil(value)));
}
