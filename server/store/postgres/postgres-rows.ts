import type { PropertyValue } from '../../../protocol/index.js';
import type { ApiKeyRecord, BotPolicy, Credential, EventRow, Project, SessionSummary } from '../event-store.js';
import { StoreError } from '../store-error.js';
import { numOrNull } from '../shared/row-values.js';

/* SQL text and row mapping of the PostgreSQL store's reads. */

/** A row as `pg` returns it. */
export type Row = Record<string, unknown>;

/** Event columns the read API returns. */
export const EVENT_COLUMNS =
  'event_id, event_type, user_id, session_id, timestamp, client_timestamp, received_at, properties, user_agent, ip_address, is_bot, visitor_id';

/**
 * Sessions of project `$1`, most recently active first, at most `$2`. The event count is the union
 * length of the chunk ranges: each chunk adds the part of its range past the chunks before it.
 */
export const LIST_SESSIONS_SQL = `
WITH spans AS (
  SELECT session_id, event_offset, event_count, duration, received_at, is_final,
    MAX(event_offset + event_count) OVER (
      PARTITION BY session_id ORDER BY event_offset ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS covered_before
  FROM recording_chunks WHERE project_id = $1
), sessions AS (
  SELECT session_id, COUNT(*) AS chunk_count,
    SUM(GREATEST(0, event_offset + event_count - GREATEST(event_offset, COALESCE(covered_before, 0)))) AS event_count,
    MAX(duration) AS duration, MIN(received_at) AS first_received_at,
    MAX(received_at) AS last_received_at, bool_or(is_final) AS finished
  FROM spans GROUP BY session_id
  ORDER BY last_received_at DESC, session_id DESC LIMIT $2
)
SELECT s.*,
  (SELECT c.start_url FROM recording_chunks c WHERE c.project_id = $1 AND c.session_id = s.session_id
     AND c.start_url IS NOT NULL ORDER BY c.event_offset LIMIT 1) AS start_url,
  (SELECT c.user_id FROM recording_chunks c WHERE c.project_id = $1 AND c.session_id = s.session_id
     AND c.user_id IS NOT NULL ORDER BY c.event_offset LIMIT 1) AS user_id
FROM sessions s ORDER BY s.last_received_at DESC, s.session_id DESC`;

/**
 * The distinct project ids of `events` by a loose index scan: one index seek per project
 * (PostgreSQL 15 has no skip scan), so retention deletes by index range per project instead of
 * scanning the whole table.
 */
export const EVENT_PROJECTS_SQL = `
WITH RECURSIVE p AS (
  (SELECT project_id FROM events ORDER BY project_id LIMIT 1)
  UNION ALL
  SELECT (SELECT e.project_id FROM events e WHERE e.project_id > p.project_id ORDER BY e.project_id LIMIT 1)
  FROM p WHERE p.project_id IS NOT NULL
)
SELECT project_id FROM p WHERE project_id IS NOT NULL`;

/** BIGINT, COUNT and SUM arrive as strings (they may exceed 2^53); ours never do. */
export const num = (value: unknown): number => Number(value);

/** Maps an `events` row. */
export function toEventRow(row: Row): EventRow {
  return {
    eventId: row.event_id as string,
    eventType: row.event_type as string,
    userId: row.user_id as string | null,
    sessionId: row.session_id as string | null,
    timestamp: num(row.timestamp),
    clientTimestamp: numOrNull(row.client_timestamp),
    receivedAt: num(row.received_at),
    properties: row.properties as Record<string, PropertyValue>,
    userAgent: row.user_agent as string | null,
    ipAddress: row.ip_address as string | null,
    isBot: row.is_bot === true,
    visitorId: row.visitor_id as string | null,
  };
}

/** Maps a `projects` row. */
export function toProject(row: Row): Project {
  return {
    id: row.id as string,
    name: row.name as string,
    createdAt: num(row.created_at),
    fullIp: row.full_ip as boolean,
    corsOrigins: row.cors_origins as string[],
    bots: row.bots as BotPolicy,
  };
}

/** Maps an `api_keys` row. */
export function toKey(row: Row): ApiKeyRecord {
  return {
    id: row.id as string,
    projectId: row.project_id as string,
    kind: row.kind as ApiKeyRecord['kind'],
    hash: row.hash as string,
    prefix: row.prefix as string,
    createdAt: num(row.created_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

/** Maps a row of the credential lookup (api_keys joined with projects, project columns renamed). */
export function toCredential(row: Row): Credential {
  return {
    key: toKey(row),
    project: {
      id: row.project_id as string,
      name: row.project_name as string,
      createdAt: num(row.project_created_at),
      fullIp: row.full_ip as boolean,
      corsOrigins: row.cors_origins as string[],
      bots: row.bots as BotPolicy,
    },
  };
}

/** Turns a unique or foreign-key violation into the matching {@link StoreError}; other errors pass through. */
export function constraintError(error: unknown, what: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === '23505') return new StoreError('DUPLICATE', `${what} already exists.`, { cause: error });
  if (code === '23503') return new StoreError('UNKNOWN_PROJECT', `${what}: the project does not exist.`, { cause: error });
  return error;
}

/** Maps a row of {@link LIST_SESSIONS_SQL}. */
export function toSessionSummary(row: Row): SessionSummary {
  return {
    sessionId: row.session_id as string,
    userId: row.user_id as string | null,
    startUrl: row.start_url as string | null,
    duration: num(row.duration),
    chunkCount: num(row.chunk_count),
    eventCount: num(row.event_count),
    firstReceivedAt: num(row.first_received_at),
    lastReceivedAt: num(row.last_received_at),
    finished: row.finished === true,
  };
}
