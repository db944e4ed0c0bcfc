/**
 * The SQLite schema. Times are INTEGER milliseconds since the epoch; `properties` and recording
 * `events` are JSON text (never queried inside, so no JSON1 indexes). Version in `PRAGMA user_version`.
 *
 * Event indexes serve the read API, newest first, scanned backwards:
 * - `UNIQUE (project_id, event_id)`: dedupe. Time-ordered UUIDv7 ids keep it appending (DESIGN.md).
 * - `(project_id, timestamp, event_id)`: the unfiltered listing and keyset cursor.
 * - one per filter (`event_type`, `user_id`, `session_id`) followed by `(timestamp, event_id)`, so a
 *   filtered page is an index range read in order; the user and session ones are partial
 *   (`IS NOT NULL`) because anonymous or session-less events never match those filters.
 */
export const SQLITE_SCHEMA_VERSION = 1;

export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  full_ip INTEGER NOT NULL DEFAULT 0,
  cors_origins TEXT NOT NULL DEFAULT '[]'
);

CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read')),
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS api_keys_by_project ON api_keys (project_id, created_at);

CREATE TABLE IF NOT EXISTS events (
  project_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  user_id TEXT,
  session_id TEXT,
  timestamp INTEGER NOT NULL,
  client_timestamp INTEGER,
  received_at INTEGER NOT NULL,
  properties TEXT NOT NULL,
  user_agent TEXT,
  ip_address TEXT,
  UNIQUE (project_id, event_id)
);
CREATE INDEX IF NOT EXISTS events_by_time ON events (project_id, timestamp, event_id);
CREATE INDEX IF NOT EXISTS events_by_type ON events (project_id, event_type, timestamp, event_id);
CREATE INDEX IF NOT EXISTS events_by_user ON events (project_id, user_id, timestamp, event_id)
  WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_by_session ON events (project_id, session_id, timestamp, event_id)
  WHERE session_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS recording_chunks (
  project_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  event_offset INTEGER NOT NULL,
  events TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  duration REAL NOT NULL,
  start_url TEXT,
  user_id TEXT,
  is_final INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  UNIQUE (project_id, session_id, event_offset)
);
CREATE INDEX IF NOT EXISTS recording_chunks_by_received ON recording_chunks (received_at);
`;
