/**
 * The PostgreSQL schema, the same shape as SQLite's (`sqlite-schema.ts`) so both stores answer
 * alike:
 * - Times are BIGINT milliseconds since the epoch, exactly the numbers of the store interface: no
 *   time-zone conversion, no rounding to microseconds, and the keyset cursor compares integers.
 * - Queried fields are real columns; `properties` and a chunk's `events` are JSONB.
 * - `event_offset` is DOUBLE PRECISION, the exact type of a JS number: the wire allows any integer,
 *   and one offset beyond BIGINT must not fail the group commit it shares with other requests.
 * - Identifier columns use the "C" collation: byte order is what the cursor and dedupe need, and
 *   its comparisons are cheaper than a linguistic collation's.
 * - Version lives in `schema_version`; DDL runs under an advisory lock so that several server
 *   processes starting at once on one database create it once.
 */
export const POSTGRES_SCHEMA_VERSION = 1;

/** Key of the transaction-level advisory lock taken around schema changes. */
export const SCHEMA_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-analytics:schema'))";

export const POSTGRES_SCHEMA = `
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS projects (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  full_ip BOOLEAN NOT NULL DEFAULT false,
  cors_origins TEXT[] NOT NULL DEFAULT '{}'
);

CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read')),
  hash TEXT COLLATE "C" NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX IF NOT EXISTS api_keys_by_project ON api_keys (project_id, created_at);

CREATE TABLE IF NOT EXISTS events (
  project_id TEXT COLLATE "C" NOT NULL,
  event_id TEXT COLLATE "C" NOT NULL,
  event_type TEXT COLLATE "C" NOT NULL,
  user_id TEXT COLLATE "C",
  session_id TEXT COLLATE "C",
  timestamp BIGINT NOT NULL,
  client_timestamp BIGINT,
  received_at BIGINT NOT NULL,
  properties JSONB NOT NULL,
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
  project_id TEXT COLLATE "C" NOT NULL,
  session_id TEXT COLLATE "C" NOT NULL,
  event_offset DOUBLE PRECISION NOT NULL,
  events JSONB NOT NULL,
  event_count INTEGER NOT NULL,
  duration DOUBLE PRECISION NOT NULL,
  start_url TEXT,
  user_id TEXT,
  is_final BOOLEAN NOT NULL,
  received_at BIGINT NOT NULL,
  UNIQUE (project_id, session_id, event_offset)
);
CREATE INDEX IF NOT EXISTS recording_chunks_by_received ON recording_chunks (received_at);

INSERT INTO schema_version (version) SELECT ${POSTGRES_SCHEMA_VERSION}
  WHERE NOT EXISTS (SELECT 1 FROM schema_version);
`;
