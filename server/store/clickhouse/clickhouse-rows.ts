import type { PropertyValue } from '../../../protocol/wire-types.js';
import type { EventDimensions, EventRow, SessionSummary, StoredEvent, StoredRecordingChunk } from '../event-store.js';
import { cleanJson, cleanNullableText, cleanText, wholeMs, wholeMsOrNull } from '../shared/sanitize.js';
import type { Row } from './clickhouse-transport.js';

/*
 * Rows as ClickHouse takes and gives them (`JSONEachRow`). Text is cleaned of NUL and lone
 * surrogates and times are whole ms before they are written, exactly as the other stores do
 * (`shared/sanitize.ts`), so that the three stores return the same values for the same input.
 */

/** The columns of an {@link EventRow}, for `SELECT`. */
export const EVENT_COLUMNS =
  'event_id, event_type, user_id, session_id, timestamp, client_timestamp, received_at, properties, user_agent, ip_address, is_bot, visitor_id';

/** The report columns of each dimension field, in the schema's names. */
const DIMENSION_FIELDS: ReadonlyArray<readonly [keyof EventDimensions, string]> = [
  ['path', 'path'],
  ['host', 'host'],
  ['referrerHost', 'referrer_host'],
  ['channel', 'channel'],
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['browser', 'browser'],
  ['os', 'os'],
  ['device', 'device'],
  ['screenClass', 'screen_class'],
  ['anonymousId', 'anonymous_id'],
  ['country', 'country'],
];

/** An event as a row of `events` (the event id already cleaned: it is the dedupe key). */
export function eventToRow(e: StoredEvent, eventId: string): Row {
  const row: Row = {
    project_id: cleanText(e.projectId),
    event_id: eventId,
    event_type: cleanText(e.eventType),
    user_id: cleanNullableText(e.userId),
    session_id: cleanNullableText(e.sessionId),
    timestamp: wholeMs(e.timestamp),
    client_timestamp: wholeMsOrNull(e.clientTimestamp),
    received_at: wholeMs(e.receivedAt),
    properties: cleanJson(JSON.stringify(e.properties)),
    user_agent: cleanNullableText(e.userAgent),
    ip_address: cleanNullableText(e.ipAddress),
    is_bot: e.isBot,
    visitor_id: cleanNullableText(e.visitorId),
  };
  for (const [field, column] of DIMENSION_FIELDS) row[column] = e.dimensions === undefined ? null : cleanNullableText(e.dimensions[field]);
  return row;
}

/** A chunk as a row of `recording_chunks` (the session id already cleaned: it is part of the key). */
export function chunkToRow(c: StoredRecordingChunk, sessionId: string): Row {
  return {
    project_id: cleanText(c.projectId),
    session_id: sessionId,
    event_offset: c.eventOffset,
    events: cleanJson(c.eventsJson),
    event_count: c.eventCount,
    duration: c.duration,
    start_url: cleanNullableText(c.startUrl),
    user_id: cleanNullableText(c.userId),
    is_final: c.isFinal,
    received_at: wholeMs(c.receivedAt),
  };
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const num = (value: unknown): number => Number(value ?? 0);

/** A row of {@link EVENT_COLUMNS} as the read API returns it. */
export function rowToEvent(row: Row): EventRow {
  return {
    eventId: String(row.event_id),
    eventType: String(row.event_type),
    userId: text(row.user_id),
    sessionId: text(row.session_id),
    timestamp: num(row.timestamp),
    clientTimestamp: row.client_timestamp === null || row.client_timestamp === undefined ? null : num(row.client_timestamp),
    receivedAt: num(row.received_at),
    properties: JSON.parse(String(row.properties)) as Record<string, PropertyValue>,
    userAgent: text(row.user_agent),
    ipAddress: text(row.ip_address),
    isBot: row.is_bot === true,
    visitorId: text(row.visitor_id),
  };
}

/** A row of the session listing (`clickhouse-store.ts`). */
export function rowToSessionSummary(row: Row): SessionSummary {
  return {
    sessionId: String(row.session_id),
    userId: text(row.user_id),
    startUrl: text(row.start_url),
    duration: num(row.duration),
    chunkCount: num(row.chunk_count),
    eventCount: num(row.event_count),
    firstReceivedAt: num(row.first_received_at),
    lastReceivedAt: num(row.last_received_at),
    finished: row.finished === true || row.finished === 1,
  };
}
