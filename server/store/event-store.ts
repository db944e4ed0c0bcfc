import type { PropertyValue, RecordedEvent } from '../../protocol/wire-types.js';
import type { AccountStore } from './account-store.js';
import type { FilterDimension, ReportStore } from './report-store.js';

/**
 * Which side of the product a key opens: browser write keys are public; read keys and admin keys
 * are secret, admin keys for what the routes reserve to administration. The store only keeps the kind.
 */
export type KeyKind = 'write' | 'read' | 'admin';

/**
 * What the server does with events from crawlers, headless browsers and automated browsers
 * (docs/decisions.md, "Bot filtering"): `drop` acknowledges them without storing, `flag` stores
 * them with `isBot` set, `keep` stores them as any other event.
 */
export type BotPolicy = 'drop' | 'flag' | 'keep';

/** Every {@link BotPolicy}, in the order the CLI's help names them. */
export const BOT_POLICIES: readonly BotPolicy[] = ['drop', 'flag', 'keep'];

/**
 * The policy of a project created without one: bot events are stored flagged and left out of the
 * reports, so nothing is acknowledged and thrown away unless a project chose `drop`. Projects made
 * before version 4 of the schema have `drop`, the default of that time, until changed.
 */
export const DEFAULT_BOT_POLICY: BotPolicy = 'flag';

/** A project as stored. */
export interface Project {
  id: string;
  name: string;
  createdAt: number;
  /** Keep full IP addresses instead of truncated ones (docs/decisions.md, "IP address truncation"). */
  fullIp: boolean;
  /** Origins allowed by CORS for this project, in addition to the server-wide ones. */
  corsOrigins: string[];
  /** What happens to bot events. @default 'flag' */
  bots: BotPolicy;
}

/** What {@link EventStore.updateProject} may change. */
export interface ProjectChanges {
  bots?: BotPolicy;
}

/** An API key as stored: only the SHA-256 hash of the secret is kept. */
export interface ApiKeyRecord {
  id: string;
  projectId: string;
  kind: KeyKind;
  /** Hex SHA-256 of the full key. */
  hash: string;
  /** The first characters of the key, safe to show so an operator can tell keys apart. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A live key with its project, as {@link EventStore.findCredential} finds them. */
export interface Credential {
  key: ApiKeyRecord;
  project: Project;
}

/**
 * What the reports group and filter by, extracted from an event at ingest into columns of its own
 * (`server/reports/dimensions.ts`; docs/protocol.md, "Reports"). Null where the event does not say.
 */
export interface EventDimensions {
  /** The page's path (`page.path`, else the path of `page.url`). */
  path: string | null;
  /** The page's host name, lower-cased. */
  host: string | null;
  /** The referrer's host name; null without a referrer and for a navigation inside the site. */
  referrerHost: string | null;
  /** The traffic channel of an entry into the site (`protocol/traffic-channel.ts`); null inside the site. */
  channel: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  /** Browser family. */
  browser: string | null;
  /** Operating system family. */
  os: string | null;
  /** Device type: `desktop`, `mobile`, `tablet`, … */
  device: string | null;
  /** Screen size class from the screen's width: `mobile`, `tablet`, `laptop`, `desktop`. */
  screenClass: string | null;
  /** The client's anonymous id (`properties.anonymous_id`). */
  anonymousId: string | null;
  /**
   * The ISO 3166-1 alpha-2 code of the client's country, from its full address at ingest
   * (`server/reports/country.ts`); the address itself is kept only as the project's IP setting
   * says (truncated by default). Null for an unknown, private or loopback address, and for events
   * stored before version 7 of the SQLite schema and 9 of the PostgreSQL one (their stored address
   * is truncated: the backfill of report columns leaves this one null).
   */
  country: string | null;
}

/** One event ready to store: validated, with server-side fields filled in. */
export interface StoredEvent {
  projectId: string;
  eventId: string;
  eventType: string;
  userId: string | null;
  sessionId: string | null;
  /** Event time in ms since the epoch, after clock-skew correction. */
  timestamp: number;
  /** The client's own timestamp as it sent it (before any correction); null when it sent none. */
  clientTimestamp: number | null;
  /** When the server received the request, ms since the epoch. */
  receivedAt: number;
  properties: Record<string, PropertyValue>;
  userAgent: string | null;
  ipAddress: string | null;
  /** A crawler, headless or automated browser sent it, and the project flags such events. */
  isBot: boolean;
  /**
   * The cookieless visitor: a hash of the day's salt, the project, the full client address and the
   * user agent (`server/visitor-id.ts`); null when the address was unknown.
   */
  visitorId: string | null;
  /** The report columns; absent, they are stored null (a tool or test writing raw rows). */
  dimensions?: EventDimensions;
}

/** One chunk of a session recording ready to store. */
export interface StoredRecordingChunk {
  projectId: string;
  sessionId: string;
  eventOffset: number;
  /**
   * The chunk's recorded events as a JSON array, timestamps already corrected for clock skew.
   * Text, not objects: a chunk may be megabytes, and text crosses to a writer thread as one copy.
   */
  eventsJson: string;
  /** How many events `eventsJson` holds. */
  eventCount: number;
  /** Recording duration in seconds as the client reported it. */
  duration: number;
  startUrl: string | null;
  userId: string | null;
  isFinal: boolean;
  receivedAt: number;
}

/** Everything that one group commit writes in one transaction. */
export interface WriteBatch {
  events: StoredEvent[];
  chunks: StoredRecordingChunk[];
}

/** What one group commit did, item by item in the order of the batch. */
export interface WriteResult {
  /** For each event of the batch: true when stored now, false when `(projectId, eventId)` existed. */
  eventInserted: boolean[];
  /** For each chunk: true when stored now, false when `(projectId, sessionId, eventOffset)` existed. */
  chunkInserted: boolean[];
}

/** Filters of the read API's event listing. */
export interface EventQuery {
  projectId: string;
  eventType?: string;
  userId?: string;
  sessionId?: string;
  /**
   * Report dimensions the events must have, each compared with its report column (the reports'
   * filters, docs/protocol.md; `event_type` is the field above).
   */
  filters?: Partial<Record<Exclude<FilterDimension, 'event_type'>, string>>;
  /** Inclusive lower bound on `timestamp`, ms. */
  from?: number;
  /** Exclusive upper bound on `timestamp`, ms. */
  to?: number;
  /** Opaque cursor returned by the previous page. */
  cursor?: string;
  /** Page size, 1–1000. */
  limit: number;
}

/** An event as the read API returns it. */
export interface EventRow {
  eventId: string;
  eventType: string;
  userId: string | null;
  sessionId: string | null;
  timestamp: number;
  clientTimestamp: number | null;
  receivedAt: number;
  properties: Record<string, PropertyValue>;
  userAgent: string | null;
  ipAddress: string | null;
  isBot: boolean;
  visitorId: string | null;
}

/** One page of events, newest first. `nextCursor` is null on the last page. */
export interface EventPage {
  events: EventRow[];
  nextCursor: string | null;
}

/** One page of an export: events oldest first, after a position, within a time range. */
export interface ExportQuery {
  projectId: string;
  /** Inclusive lower bound on `timestamp`, ms. */
  from?: number;
  /** Exclusive upper bound on `timestamp`, ms. */
  to?: number;
  /** The last event of the previous page; the page starts after it in `(timestamp, eventId)` order. */
  after?: { timestamp: number; eventId: string };
  /** Page size, 1–1000. */
  limit: number;
}

/** What {@link EventStore.deleteUser} deleted. */
export interface DeletedUser {
  events: number;
  /** Recording chunks. */
  recordings: number;
}

/** A recorded session as listed by the read API. */
export interface SessionSummary {
  sessionId: string;
  userId: string | null;
  startUrl: string | null;
  /** Greatest duration any chunk reported, seconds. */
  duration: number;
  chunkCount: number;
  eventCount: number;
  firstReceivedAt: number;
  lastReceivedAt: number;
  /** A chunk with `is_final` arrived. */
  finished: boolean;
}

/** A session's recording reassembled from its chunks. */
export interface Recording {
  sessionId: string;
  /** Recorded events in `event_offset` order, each offset once. */
  events: RecordedEvent[];
  /** Ranges of offsets `[from, to)` that no chunk covered. */
  gaps: Array<{ from: number; to: number }>;
  finished: boolean;
}

/**
 * Where the server keeps projects, keys, events and recordings, and the dashboard's accounts,
 * sign-in sessions and shared links ({@link AccountStore}). SQLite and PostgreSQL implement it;
 * one contract suite (`event-store.contract.ts`) runs against both, and `account-store.contract.ts`
 * against each store's accounts.
 */
export interface EventStore extends AccountStore {
  /** `sqlite`, `postgres` or `clickhouse`, for logs and metrics. */
  readonly kind: 'sqlite' | 'postgres' | 'clickhouse';
  /** Creates the schema when missing. Safe to call on every start and from many processes. */
  init(): Promise<void>;
  /** Writes a group commit in one transaction; resolves only after it is durable. */
  write(batch: WriteBatch): Promise<WriteResult>;

  createProject(project: Project): Promise<void>;
  getProject(projectId: string): Promise<Project | null>;
  listProjects(): Promise<Project[]>;
  createKey(key: ApiKeyRecord): Promise<void>;
  /** The live (not revoked) key with this hash, or null. */
  findKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /**
   * The live key with this hash and its project, in one lookup: what authenticates every request.
   * A store may answer from a cache, but never with a key revoked (or a project changed) by any
   * process before this call: revocation takes effect at once.
   */
  findCredential(hash: string): Promise<Credential | null>;
  listKeys(projectId: string): Promise<ApiKeyRecord[]>;
  /** Revokes a key by id; resolves false when there was no such live key. */
  revokeKey(keyId: string, at: number): Promise<boolean>;
  /**
   * Changes a project's settings; resolves false when there is no such project. Like a key change,
   * it reaches every process's credential cache at once.
   */
  updateProject(projectId: string, changes: ProjectChanges): Promise<boolean>;

  queryEvents(query: EventQuery): Promise<EventPage>;
  listSessions(projectId: string, limit: number): Promise<SessionSummary[]>;
  getRecording(projectId: string, sessionId: string): Promise<Recording | null>;
  /**
   * One page of the project's events, oldest first by `(timestamp, eventId)`: an export walks the
   * whole range page by page (keyset), holding one page at a time.
   */
  exportEvents(query: ExportQuery): Promise<EventRow[]>;
  /**
   * Deletes, in one transaction, the project's events whose `userId` is this user and the recording
   * chunks whose own `userId` is this user. Never the chunks of a session merely named by one of
   * the user's events: session ids are the client's to choose, so anyone with the public write key
   * could name another person's session.
   */
  deleteUser(projectId: string, userId: string): Promise<DeletedUser>;

  /**
   * The salt of a UTC day (`YYYY-MM-DD`) for cookieless visitor ids, shared by every process: the
   * one already stored for `day`, else `candidate`, stored now. Kept apart from the events.
   */
  dailySalt(day: string, candidate: string): Promise<string>;
  /** Deletes the salts of days before `day` (`YYYY-MM-DD`); resolves with how many. */
  deleteSaltsBefore(day: string): Promise<number>;

  /** Deletes events and recording chunks older than `cutoff` (ms); resolves with the counts. */
  deleteOlderThan(cutoff: number): Promise<{ events: number; chunks: number }>;
  /** The aggregate reads of the report endpoints (`report-store.ts`). */
  readonly reports: ReportStore;

  /** Resolves when the database answers; rejects otherwise (for `/readyz`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
