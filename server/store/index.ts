/**
 * The server's storage layer: one {@link EventStore} interface, SQLite and PostgreSQL behind it,
 * and ClickHouse for the events of installations that outgrow one database machine.
 */
export { encodeEventCursor, decodeEventCursor } from './shared/cursor.js';
export type { EventCursor } from './shared/cursor.js';
// chDB's transport stays out: chDB is a development dependency, for the tests.
export { createClickHouseStore } from './clickhouse/clickhouse-store.js';
export type { ClickHouseStoreOptions } from './clickhouse/clickhouse-store.js';
// The transport's helper types under ClickHouse names: `Row` and `Settings` alone say too little here.
export type {
  ClickHouseTransport,
  ParamValue as ClickHouseParamValue,
  Params as ClickHouseParams,
  Row as ClickHouseRow,
  Settings as ClickHouseSettings,
} from './clickhouse/clickhouse-transport.js';
export { createHttpTransport } from './clickhouse/http-transport.js';
export type { HttpTransportOptions } from './clickhouse/http-transport.js';
export { DEFAULT_DURABILITY, DURABILITIES } from './durability.js';
export type { Durability } from './durability.js';
export type {
  ApiKeyRecord,
  BotPolicy,
  DeletedUser,
  EventPage,
  EventQuery,
  EventRow,
  EventStore,
  ExportQuery,
  KeyKind,
  Project,
  ProjectChanges,
  Recording,
  SessionSummary,
  StoredEvent,
  StoredRecordingChunk,
  WriteBatch,
  WriteResult,
} from './event-store.js';
export { isPostgresUrl, openStore } from './open-store.js';
export type { OpenStoreOptions } from './open-store.js';
export { createPostgresStore } from './postgres/postgres-store.js';
export type { PostgresStoreOptions } from './postgres/postgres-store.js';
export { createSqliteStore } from './sqlite/sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite/sqlite-store-options.js';
export { StoreError, isStoreError } from './store-error.js';
export type { StoreErrorCode } from './store-error.js';
export type { Account, AccountChanges, AccountRole, AccountSession, AccountStore, SharedLink, SignedInAccount } from './account-store.js';
