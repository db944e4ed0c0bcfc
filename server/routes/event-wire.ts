import type { EventRow } from '../store/event-store.js';

/**
 * A stored time as ISO text, or null for one no Date can hold. New rows are always inside the
 * accepted window (`clock-skew.ts`), but a listing must not fail on any row a store holds.
 */
export function isoTime(ms: number): string | null {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** An event as the read API and the export answer it (docs/protocol.md, "GET /api/v1/events"). */
export function eventToWire(e: EventRow): Record<string, unknown> {
  return {
    event_id: e.eventId,
    event_type: e.eventType,
    user_id: e.userId,
    session_id: e.sessionId,
    timestamp: isoTime(e.timestamp),
    client_timestamp: e.clientTimestamp === null ? null : isoTime(e.clientTimestamp),
    received_at: isoTime(e.receivedAt),
    properties: e.properties,
    user_agent: e.userAgent,
    ip_address: e.ipAddress,
    is_bot: e.isBot,
    visitor_id: e.visitorId,
  };
}
