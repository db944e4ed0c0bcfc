import Router from '@koa/router';
import Koa from 'koa';
import { LIMITS } from '../protocol/index.js';
import { createBodyReader } from './body.js';
import { DEFAULT_SKEW_THRESHOLD_MS } from './clock-skew.js';
import { type Logger, silentLogger } from './logger.js';
import { type Metrics, createMetrics } from './metrics.js';
import { cors } from './middleware/cors.js';
import { errorHandler } from './middleware/error-handler.js';
import { eventsBatchRoute } from './routes/events-batch.js';
import { healthzRoute, metricsRoute, readyzRoute } from './routes/operations.js';
import { getRecordingRoute, listEventsRoute, listSessionsRoute } from './routes/read-api.js';
import { recordingsRoute } from './routes/recordings.js';
import type { RouteContext } from './routes/route-context.js';
import type { EventStore } from './store/event-store.js';
import { type WriteQueue, type WriteQueueOptions, createWriteQueue } from './write-queue.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Where events go; opened and `init()`ed by the caller. */
  store: EventStore;
  /** @default a logger that drops everything */
  logger?: Logger;
  /** Server clock, ms. @default Date.now */
  now?: () => number;
  /** Take the client address from `X-Forwarded-For` (only behind a proxy you run). @default false */
  trustProxy?: boolean;
  /** Origins allowed by CORS; `*` allows any. @default ['*'] */
  corsOrigins?: readonly string[];
  /** Client clocks off by more than this are corrected, ms. @default 10000 */
  skewThresholdMs?: number;
  /** Largest decompressed batch body, bytes. @default 1 MiB */
  maxBatchBodyBytes?: number;
  /** Largest decompressed recording chunk, bytes. @default 16 MiB */
  maxRecordingBodyBytes?: number;
  /** Most events in one batch. @default 1000 */
  maxEventsPerBatch?: number;
  /** A recorded session with no final chunk is reported finished after this much silence, ms. @default 30 minutes */
  sessionIdleMs?: number;
  /** Group-commit settings. */
  writeQueue?: WriteQueueOptions;
}

/** The Koa app, plus what its owner needs to stop it cleanly. */
export interface AnalyticsApp extends Koa {
  /** Resolves when every write accepted so far is committed. */
  drain(): Promise<void>;
  readonly metrics: Metrics;
  readonly writeQueue: WriteQueue;
}

/**
 * Creates the ingestion server as a Koa app without listening (STYLE.md 13): use
 * `http.createServer(app.callback())`, or the CLI's `start`.
 */
export function createApp(options: AppOptions): AnalyticsApp {
  const logger = options.logger ?? silentLogger;
  const metrics = createMetrics();
  const writeQueue = createWriteQueue(options.store, logger, metrics, options.writeQueue);
  const rc: RouteContext = {
    store: options.store,
    writeQueue,
    metrics,
    logger,
    now: options.now ?? (() => Date.now()),
    skewThresholdMs: options.skewThresholdMs ?? DEFAULT_SKEW_THRESHOLD_MS,
    readBatchBody: createBodyReader(options.maxBatchBodyBytes ?? LIMITS.maxBatchBodyBytes),
    readRecordingBody: createBodyReader(options.maxRecordingBodyBytes ?? LIMITS.maxRecordingBodyBytes),
    maxEventsPerBatch: options.maxEventsPerBatch ?? LIMITS.maxEventsPerBatch,
    sessionIdleMs: options.sessionIdleMs ?? 30 * 60_000,
  };

  const router = new Router();
  router.post('/api/v1/events/batch', eventsBatchRoute(rc));
  router.post('/api/v1/sessions/:sessionId/recordings', recordingsRoute(rc));
  router.get('/api/v1/events', listEventsRoute(rc));
  router.get('/api/v1/sessions', listSessionsRoute(rc));
  router.get('/api/v1/sessions/:sessionId/recording', getRecordingRoute(rc));
  router.get('/healthz', healthzRoute());
  router.get('/readyz', readyzRoute(rc));
  router.get('/metrics', metricsRoute(rc));

  const koa = new Koa({ proxy: options.trustProxy ?? false });
  // Errors are answered and logged by errorHandler; Koa's default handler would print them again.
  koa.silent = true;
  koa.use(errorHandler(logger, metrics));
  koa.use(cors(options.corsOrigins ?? ['*']));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));

  return Object.assign(koa, {
    drain: () => writeQueue.drain(),
    metrics,
    writeQueue,
  });
}
