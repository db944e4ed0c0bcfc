import type { RequestOrigin } from '../auth/request-origin.js';
import type { SignInLimiter } from '../auth/sign-in-limiter.js';
import type { SignInSessions } from '../auth/sign-in-sessions.js';
import type { BodyReader } from '../body.js';
import type { BotDetector } from '../bot-filter.js';
import type { ByteBudget } from '../byte-budget.js';
import type { CountryLookup } from '../reports/country.js';
import type { DroppedEventsLog } from '../dropped-events-log.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { RateLimiter } from '../middleware/rate-limit.js';
import type { RecordingParser } from '../recording-parser.js';
import type { EventStore } from '../store/event-store.js';
import type { VisitorIds } from '../visitor-id.js';
import type { WriteQueue } from '../write-queue.js';

/** What every route handler is built from. */
export interface RouteContext {
  store: EventStore;
  writeQueue: WriteQueue;
  metrics: Metrics;
  logger: Logger;
  now: () => number;
  /** Per-project limit, checked by each API route right after authentication. */
  rateLimiter: RateLimiter;
  /** Client clock beyond this is corrected, ms. */
  skewThresholdMs: number;
  readBatchBody: BodyReader;
  readRecordingBody: BodyReader;
  /** Parses and checks recording chunks off the request thread. */
  recordingParser: RecordingParser;
  /** Bounds the memory of recording chunks between reading and committing. */
  recordingBudget: ByteBudget;
  maxEventsPerBatch: number;
  /** A recorded session without a final chunk counts as finished after this much silence, ms. */
  sessionIdleMs: number;
  /** Tells bot events (remembering the verdict per user agent). */
  bots: BotDetector;
  /** Logs, rate-limited, the events a project's policy dropped. */
  droppedEvents: DroppedEventsLog;
  /** Makes the cookieless visitor ids of a request. */
  visitorIds: VisitorIds;
  /** Finds the country of a request's client address, for the `country` report column. */
  countries: CountryLookup;
  /** The sessions of signed-in accounts (`auth/sign-in-sessions.ts`). */
  signIns: SignInSessions;
  /** Limits password guessing (`auth/sign-in-limiter.ts`). */
  signInLimiter: SignInLimiter;
  /** Whether a request came over TLS, and the same-origin check of cookie-authenticated changes. */
  origin: RequestOrigin;
  /** The API's base path ('' or `/stats`): the session cookie's path and the shared links' addresses. */
  basePath: string;
}
