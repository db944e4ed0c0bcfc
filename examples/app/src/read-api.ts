/**
 * The server's read API as the Events and Replay pages use it (`GET /api/v1/events`,
 * `/api/v1/sessions`, `/api/v1/sessions/:id/recording`), authenticated with the read key.
 */
import type { ExampleConfig } from './config.js';

/** An event as the read API returns it. */
export interface ReceivedEvent {
  event_id: string;
  event_type: string;
  user_id: string | null;
  session_id: string | null;
  timestamp: string;
  received_at: string;
  properties: Record<string, string | number | boolean | null>;
  user_agent: string | null;
}

/** A recorded session as listed. */
export interface RecordedSession {
  session_id: string;
  user_id: string | null;
  start_url: string | null;
  /** Seconds. */
  duration: number;
  chunk_count: number;
  event_count: number;
  first_received_at: string;
  last_received_at: string;
  finished: boolean;
}

/** One recorded rrweb event. */
export interface RecordedEvent {
  type: number;
  data: unknown;
  timestamp: number;
  delay?: number;
}

/** A session's recording, in order. */
export interface Recording {
  session_id: string;
  events: RecordedEvent[];
  gaps: Array<{ from: number; to: number }>;
  finished: boolean;
}

/** Filters of the event list; empty strings are ignored. */
export interface EventFilters {
  eventType: string;
  userId: string;
  sessionId: string;
}

/** A failed read, with the server's `code` when it sent one. */
export class ReadApiError extends Error {
  override readonly name = 'ReadApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** The read API of one project. */
export interface ReadApi {
  listEvents(filters: EventFilters, limit: number, signal?: AbortSignal): Promise<ReceivedEvent[]>;
  listSessions(signal?: AbortSignal): Promise<RecordedSession[]>;
  getRecording(sessionId: string, signal?: AbortSignal): Promise<Recording>;
}

/** Creates the read API for `example`; null when it has no read key. */
export function createReadApi(example: ExampleConfig): ReadApi | null {
  const readKey = example.readKey;
  if (readKey === null) return null;
  const base = example.endpoint ?? '';
  const get = async <T,>(path: string, signal: AbortSignal | undefined): Promise<T> => {
    const response = await fetch(`${base}${path}`, {
      headers: { Authorization: `ApiKey ${readKey}`, 'X-Project-ID': example.projectId, Accept: 'application/json' },
      cache: 'no-store',
      ...(signal === undefined ? {} : { signal }),
    });
    const body = (await response.json().catch(() => null)) as { error?: string; code?: string } | null;
    if (!response.ok) throw new ReadApiError(body?.error ?? `HTTP ${response.status}`, response.status, body?.code ?? null);
    return body as T;
  };
  return {
    async listEvents(filters, limit, signal) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (filters.eventType.trim()) query.set('event_type', filters.eventType.trim());
      if (filters.userId.trim()) query.set('user_id', filters.userId.trim());
      if (filters.sessionId.trim()) query.set('session_id', filters.sessionId.trim());
      return (await get<{ events: ReceivedEvent[] }>(`/api/v1/events?${query}`, signal)).events;
    },
    async listSessions(signal) {
      return (await get<{ sessions: RecordedSession[] }>('/api/v1/sessions?limit=50', signal)).sessions;
    },
    getRecording: (sessionId, signal) => get<Recording>(`/api/v1/sessions/${encodeURIComponent(sessionId)}/recording`, signal),
  };
}
