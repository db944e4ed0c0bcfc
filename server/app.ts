import Router from '@koa/router';
import Koa from 'koa';
import { LIMITS } from '../protocol/index.js';
import { createRequestOrigin } from './auth/request-origin.js';
import { type SignInLimits, createSignInLimiter } from './auth/sign-in-limiter.js';
import { type SessionLifetimes, createSignInSessions } from './auth/sign-in-sessions.js';
import { createBodyReader } from './body.js';
import { createBotDetector } from './bot-filter.js';
import { createByteBudget } from './byte-budget.js';
import { DEFAULT_SKEW_THRESHOLD_MS } from './clock-skew.js';
import { type DemoProject, demoConfigRoute } from './demo-project.js';
import { createDroppedEventsLog } from './dropped-events-log.js';
import { type Logger, silentLogger } from './logger.js';
import { type Metrics, createMetrics } from './metrics.js';
import { apiHeaders } from './middleware/api-headers.js';
import { cors } from './middleware/cors.js';
import { errorHandler } from './middleware/error-handler.js';
import { type RateLimitOptions, createRateLimiter } from './middleware/rate-limit.js';
import { createCountryLookup } from './reports/country.js';
import { eventsBatchRoute } from './routes/events-batch.js';
import { healthzRoute, metricsRoute, readyzRoute } from './routes/operations.js';
import { getRecordingRoute, listEventsRoute, listSessionsRoute } from './routes/read-api.js';
import { createRecordingParser } from './recording-parser.js';
import { recordingsRoute } from './routes/recordings.js';
import {
  errorsRoute,
  experimentRoute,
  experimentsRoute,
  funnelRoute,
  liveRoute,
  sessionStatsRoute,
  timeseriesRoute,
  topRoute,
  vitalsRoute,
} from './routes/reports.js';
import { deleteUserRoute, exportRoute } from './routes/users-and-export.js';
import { frustrationRoute } from './routes/frustration-report.js';
import { heatmapRoute } from './routes/heatmap-report.js';
import { createLinkRoute, listLinksRoute, revokeLinkRoute } from './routes/shared-links.js';
import { changePasswordRoute, sessionRoute, signInRoute, signOutRoute } from './routes/sign-in.js';
import type { RouteContext } from './routes/route-context.js';
import { type StaticFilesOptions, staticFiles } from './static-files.js';
import type { EventStore } from './store/event-store.js';
import { LOOPBACK_PROXIES, type TrustedProxies, clientAddress, parseTrustedProxies } from './trusted-proxies.js';
import { createVisitorIds } from './visitor-id.js';
import { type WriteQueue, type WriteQueueOptions, createWriteQueue } from './write-queue.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Where events go; opened and `init()`ed by the caller. */
  store: EventStore;
  /** @default a logger that drops everything */
  logger?: Logger;
  /** Server clock, ms. @default Date.now */
  now?: () => number;
  /**
   * Proxies whose `X-Forwarded-For` is believed (`server/trusted-proxies.ts`): a comma-separated
   * list of addresses and CIDR ranges (`127.0.0.1,10.0.0.0/8`), `true` for `loopback` (a proxy on
   * this machine). The client address is the rightmost entry that is not a listed proxy; a request
   * from any other peer has the header ignored. @default false (the connection's address)
   */
  trustProxy?: boolean | string;
  /** Origins allowed by CORS; `*` allows any. @default ['*'] */
  corsOrigins?: readonly string[];
  /** Client clocks off by more than this are corrected, ms. @default 10000 */
  skewThresholdMs?: number;
  /** Largest decompressed batch body, bytes. @default 1 MiB */
  maxBatchBodyBytes?: number;
  /** Largest decompressed recording chunk, bytes. @default 16 MiB */
  maxRecordingBodyBytes?: number;
  /**
   * Memory that recording chunks may hold between reading and committing, bytes (a JavaScript
   * string holds two per character). A chunk that does not fit is answered 503
   * `STORAGE_UNAVAILABLE` with `Retry-After`; one chunk alone always fits.
   * @default 128 MiB (four chunks of the largest size)
   */
  maxRecordingBytesInFlight?: number;
  /** Most events in one batch. @default 1000 */
  maxEventsPerBatch?: number;
  /** A recorded session with no final chunk is reported finished after this much silence, ms. @default 30 minutes */
  sessionIdleMs?: number;
  /** Group-commit settings. */
  writeQueue?: WriteQueueOptions;
  /**
   * Token-bucket limits per project and per client address, answered with 429 `RATE_LIMITED` and
   * `Retry-After`. Off unless given, so embedding apps and benchmarks choose; the CLI's `start`
   * turns it on with `DEFAULT_RATE_LIMITS`.
   * @default false
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * Serve a built single-page app (the example app) after the API routes, with SPA fallback
   * (`server/static-files.ts`; CLI `start --serve-example DIR`).
   * @default undefined (no files served)
   */
  staticFiles?: StaticFilesOptions;
  /**
   * The built dashboard (`dashboard/`, shipped in the package as `dist/dashboard`), served at
   * `<basePath>/dashboard/`; without `staticFiles`, `/` redirects there. CLI `start --dashboard DIR`.
   * @default undefined (no dashboard)
   */
  dashboard?: { root: string };
  /**
   * Demo mode: answer `GET /demo/config.json` with these keys, to loopback clients only
   * (`server/demo-project.ts`; CLI `start --demo`).
   * @default undefined (no such route)
   */
  demo?: DemoProject;
  /**
   * A path prefix for the whole `/api/v1/…` API, e.g. `/stats`: the server then answers
   * `/stats/api/v1/events/batch` and no longer `/api/v1/events/batch`, for a same-origin proxy
   * under a neutral path (docs/decisions.md, "Base path"). `/healthz`, `/readyz` and `/metrics`
   * stay at the root, for the operator's probes, not the app's proxy. CLI `start --base-path`.
   * @default '' (the API at the root)
   */
  basePath?: string;
  /**
   * How long a dashboard sign-in lasts: idle and absolute limits (docs/decisions.md, "Team access").
   * @default { idleMs: 12 hours, absoluteMs: 7 days }
   */
  sessions?: SessionLifetimes;
  /**
   * Limits of sign-in attempts per account and per client address, answered with 429
   * `RATE_LIMITED` and `Retry-After`. On unless turned off, whatever `rateLimit` says: they guard
   * passwords, not capacity.
   * @default { account: 5 a minute, ip: 20 a minute }
   */
  signInRateLimit?: SignInLimits | false;
}

/**
 * `basePath` as a router prefix: '' for none, else `/segment[/segment…]` without a trailing slash.
 * @throws Error for a prefix that is not a plain path (the CLI names the flag)
 */
export function normalizeBasePath(basePath: string | undefined): string {
  const trimmed = (basePath ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(trimmed) || /(^|\/)\.\.?(\/|$)/.test(trimmed)) {
    throw new Error(`The base path must look like /stats (letters, digits, ".", "_", "~", "-" between slashes), not "${basePath}".`);
  }
  return trimmed;
}

/**
 * The busiest route, `POST /api/v1/events/batch` at its exact path, run straight after CORS, before
 * the routers, which would otherwise match every request against every route and build a middleware
 * chain for it (docs/decisions.md, "Write path: each event parsed and encoded once"). Other
 * spellings of the path (a trailing slash, other letter case) still reach the same handler through
 * the router; `_matchedRoute` is set as the router sets it, for the request metrics.
 */
function ingestShortcut(path: string, limited: Koa.Middleware, route: Koa.Middleware): Koa.Middleware {
  return (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== path) return next();
    (ctx as { _matchedRoute?: string })._matchedRoute = path;
    return limited(ctx, () => route(ctx, next));
  };
}

/** The {@link AppOptions.trustProxy} setting as a list, or undefined when no proxy is trusted. */
function trustedProxiesOf(setting: boolean | string | undefined): TrustedProxies | undefined {
  if (setting === undefined || setting === false) return undefined;
  return parseTrustedProxies(setting === true ? LOOPBACK_PROXIES : setting);
}

/** The Koa app, plus what its owner needs to stop it cleanly. */
export interface AnalyticsApp extends Koa {
  /** Resolves when every write accepted so far is committed. */
  drain(): Promise<void>;
  /** Ends the app's threads (the recording parser); call after the server stopped taking requests. */
  close(): Promise<void>;
  readonly metrics: Metrics;
  readonly writeQueue: WriteQueue;
  /**
   * Deletes the visitor salts of days over for more than ten minutes (`visitor-id.ts`). Requests
   * do it as they come; `serve()` also calls it every few minutes, for a server with no traffic.
   */
  expireVisitorSalts(): void;
}

/**
 * Creates the ingestion server as a Koa app without listening (docs/architecture.md,
 * "Conventions"): use `http.createServer(app.callback())`, or the CLI's `start`.
 */
export function createApp(options: AppOptions): AnalyticsApp {
  const logger = options.logger ?? silentLogger;
  const metrics = createMetrics();
  const writeQueue = createWriteQueue(options.store, logger, metrics, options.writeQueue);
  const now = options.now ?? (() => Date.now());
  const rateLimiter = createRateLimiter(options.rateLimit ?? false, metrics, now);
  const recordingParser = createRecordingParser();
  const basePath = normalizeBasePath(options.basePath);
  // Koa's own `proxy` setting would believe X-Forwarded-For from any peer: the client address is
  // set by `clientAddress` instead, from listed proxies only.
  const trusted = trustedProxiesOf(options.trustProxy);
  const rc: RouteContext = {
    store: options.store,
    writeQueue,
    metrics,
    logger,
    now,
    rateLimiter,
    skewThresholdMs: options.skewThresholdMs ?? DEFAULT_SKEW_THRESHOLD_MS,
    readBatchBody: createBodyReader(options.maxBatchBodyBytes ?? LIMITS.maxBatchBodyBytes),
    readRecordingBody: createBodyReader(options.maxRecordingBodyBytes ?? LIMITS.maxRecordingBodyBytes),
    recordingParser,
    recordingBudget: createByteBudget(options.maxRecordingBytesInFlight ?? 128 * 1024 * 1024),
    maxEventsPerBatch: options.maxEventsPerBatch ?? LIMITS.maxEventsPerBatch,
    sessionIdleMs: options.sessionIdleMs ?? 30 * 60_000,
    bots: createBotDetector(),
    droppedEvents: createDroppedEventsLog({ logger, now }),
    visitorIds: createVisitorIds({ store: options.store, logger }),
    // A missing database costs the reports their countries, never an event: logged once, not thrown.
    countries: createCountryLookup({
      onError: (error) => logger.error('the country database could not be read; events are stored without a country', { error: String(error) }),
    }),
    signIns: createSignInSessions({ store: options.store, now, ...(options.sessions === undefined ? {} : { lifetimes: options.sessions }) }),
    signInLimiter: createSignInLimiter(options.signInRateLimit ?? {}, metrics, now),
    origin: createRequestOrigin(trusted),
    basePath,
  };
  const { visitorIds } = rc;

  const router = new Router(basePath === '' ? {} : { prefix: basePath });
  // The per-address limit sits on each API route rather than before the router, so that the two
  // cannot disagree on which spellings of a path are API requests.
  const limited = rateLimiter.byIp;
  const eventsBatch = eventsBatchRoute(rc);
  router.post('/api/v1/events/batch', limited, eventsBatch);
  router.post('/api/v1/sessions/:sessionId/recordings', limited, recordingsRoute(rc));
  router.get('/api/v1/events', limited, listEventsRoute(rc));
  router.get('/api/v1/export', limited, exportRoute(rc));
  router.get('/api/v1/sessions', limited, listSessionsRoute(rc));
  router.get('/api/v1/sessions/:sessionId/recording', limited, getRecordingRoute(rc));
  router.delete('/api/v1/users/:userId', limited, deleteUserRoute(rc));
  // Reports (docs/protocol.md, "Reports"): aggregates for a dashboard, behind the read key.
  router.get('/api/v1/reports/timeseries', limited, timeseriesRoute(rc));
  router.get('/api/v1/reports/top/:dimension', limited, topRoute(rc));
  router.get('/api/v1/reports/sessions', limited, sessionStatsRoute(rc));
  router.get('/api/v1/reports/vitals', limited, vitalsRoute(rc));
  router.get('/api/v1/reports/errors', limited, errorsRoute(rc));
  router.get('/api/v1/reports/frustration', limited, frustrationRoute(rc));
  router.get('/api/v1/reports/heatmap', limited, heatmapRoute(rc));
  router.get('/api/v1/reports/funnel', limited, funnelRoute(rc));
  router.get('/api/v1/reports/experiments', limited, experimentsRoute(rc));
  router.get('/api/v1/reports/experiments/:experiment', limited, experimentRoute(rc));
  router.get('/api/v1/reports/live', limited, liveRoute(rc));
  // The dashboard's accounts and shared links (docs/protocol.md, "Accounts and sessions").
  router.post('/api/v1/auth/sign-in', limited, signInRoute(rc));
  router.post('/api/v1/auth/sign-out', limited, signOutRoute(rc));
  router.get('/api/v1/auth/session', limited, sessionRoute(rc));
  router.post('/api/v1/auth/password', limited, changePasswordRoute(rc));
  router.get('/api/v1/links', limited, listLinksRoute(rc));
  router.post('/api/v1/links', limited, createLinkRoute(rc));
  router.delete('/api/v1/links/:linkId', limited, revokeLinkRoute(rc));
  // Operations stay at the root whatever the base path: probes and scrapers reach the server
  // directly, and a proxy that forwards only the base path then never exposes /metrics.
  const operations = new Router();
  operations.get('/healthz', healthzRoute());
  operations.get('/readyz', readyzRoute(rc));
  operations.get('/metrics', metricsRoute(rc));

  const koa = new Koa({ proxy: false });
  // Errors are answered and logged by errorHandler; Koa's default handler would print them again.
  koa.silent = true;
  koa.use(errorHandler(logger, metrics));
  koa.use(apiHeaders());
  if (trusted !== undefined) koa.use(clientAddress(trusted));
  // Before CORS: the demo keys must never be readable cross-origin.
  if (options.demo !== undefined) koa.use(demoConfigRoute(options.demo));
  // Before the routes and their rate limit, so a browser can read a 429 and its Retry-After
  // cross-origin.
  koa.use(cors(options.corsOrigins ?? ['*']));
  koa.use(ingestShortcut(`${basePath}/api/v1/events/batch`, limited, eventsBatch));
  koa.use(operations.routes());
  koa.use(operations.allowedMethods({ throw: true }));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));
  // Last: only what no API route answered falls back to files.
  // A wrong API address under the base path stays a JSON 404 too, never the app's index.html.
  if (options.dashboard !== undefined) {
    const mountPath = `${basePath}/dashboard`;
    koa.use(staticFiles({ root: options.dashboard.root, mountPath, reservedPrefixes: basePath === '' ? ['/api/'] : ['/api/', `${basePath}/api/`] }));
    if (options.staticFiles === undefined) {
      koa.use(async (ctx, next) => {
        if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.path === '/' && ctx.status === 404 && ctx.body == null) ctx.redirect(`${mountPath}/`);
        else await next();
      });
    }
  }
  if (options.staticFiles !== undefined) {
    koa.use(staticFiles({ reservedPrefixes: basePath === '' ? ['/api/'] : ['/api/', `${basePath}/api/`], ...options.staticFiles }));
  }

  return Object.assign(koa, {
    drain: () => writeQueue.drain(),
    close: () => recordingParser.close(),
    metrics,
    writeQueue,
    expireVisitorSalts: () => visitorIds.expire(now()),
  });
}
