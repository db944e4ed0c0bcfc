export { createApp } from './app.js';
export type { AnalyticsApp, AppOptions } from './app.js';
export { DEFAULT_RATE_LIMITS } from './middleware/rate-limit.js';
export type { RateLimit, RateLimitOptions } from './middleware/rate-limit.js';
export { serve } from './serve.js';
export type { RunningServer, ServeOptions } from './serve.js';
export { openStore } from './store/open-store.js';
export { createSqliteStore } from './store/sqlite/sqlite-store.js';
export { createPostgresStore } from './store/postgres/postgres-store.js';
export { createClickHouseStore, createHttpTransport } from './store/index.js';
export type { ClickHouseStoreOptions, ClickHouseTransport, HttpTransportOptions } from './store/index.js';
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
} from './store/event-store.js';
export { createJsonLogger, silentLogger } from './logger.js';
export type { LogFields, LogLevel, Logger } from './logger.js';
export { generateKey, hashKey } from './api-keys.js';
export type { Account, AccountChanges, AccountRole, AccountSession, AccountStore, SharedLink, SignedInAccount } from './store/account-store.js';
