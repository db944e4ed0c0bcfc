/**
 * AnalyticsConfig and its defaults. `resolveConfig` is the one place defaults are applied;
 * everything downstream reads a {@link ResolvedConfig}.
 */
import type { DeliveryConfig, DiscardReason } from '../protocol/worker/worker-contract.js';
import type { ABTestConfig } from './experiments/experiment-types.js';
import type { RecordingConfig } from './recorder/recording-config.js';
import type { TransportOptions } from './delivery/transport-options.js';
import type { BeforeSend } from './privacy/before-send.js';
import type { ConsentState } from './privacy/consent.js';

/** What `onDiscard` is told when events leave the queue without being accepted by the server. */
export interface DiscardInfo {
  /** Ids of the dropped events. */
  ids: string[];
  reason: DiscardReason;
  /** A sentence for logs. */
  detail: string;
}

/** The client's configuration, plus this library's delivery options (`persistQueue`, `workerUrl`, `compress`, `onDiscard`). */
export interface AnalyticsConfig {
  /** Public write key of the project. */
  apiKey: string;
  /** Project identifier. */
  projectId: string;
  /**
   * Base address of the analytics server; relative addresses resolve against the page.
   * @default the page's origin (`location.origin`), i.e. a server mounted on the same site; outside a browser `http://localhost:8787`
   */
  endpoint?: string;
  /** Log to the console. @default false */
  debug?: boolean;
  /** Initial user id. */
  userId?: string;
  /** Inactivity (ms) after which the next event starts a new session. @default 1800000 (30 minutes) */
  sessionTimeout?: number;
  /** Events per batch, and the queue length that triggers a send. @default 20 */
  batchSize?: number;
  /** Milliseconds between timed sends. @default 10000 */
  flushInterval?: number;
  /** Most events queued; the oldest is dropped to make room. @default 1000 */
  maxQueueSize?: number;
  /**
   * Retries of a failed batch (network error, 5xx). A 429, or a 503 with `Retry-After`, is waited
   * out without using one, and so is a failure while the browser says it is offline. @default 3
   */
  retryAttempts?: number;
  /** First wait before a retry (ms); doubles on each retry. @default 1000 */
  retryDelay?: number;
  /**
   * Discard events whose retries are used up (reported through `onDiscard`). With `false` they stay
   * queued and are tried again at the next flush trigger (the flush interval, a full batch,
   * `flush()`), still bounded by `maxQueueSize`: for flaky networks, at the cost of requests to a
   * server that stays down. Failures while the browser says it is offline never use up retries.
   * @default true
   */
  discardAfterRetries?: boolean;
  /** Send a page view on start and on in-page navigation. @default true */
  enableAutoPageTracking?: boolean;
  /** Send page timings once the page has loaded. @default false */
  enablePerformanceTracking?: boolean;
  /**
   * Send clicks (and sampled hovers) with their coordinates, and the frustration signals of clicks:
   * `rage_click`, `dead_click`, `error_click`, and each page view's scroll depth (`scroll_depth`). @default false
   */
  enableHeatmapTracking?: boolean;
  /** Record the session with rrweb from start. @default false */
  enableSessionRecording?: boolean;
  /**
   * How sessions are recorded (`startRecording()`, `enableSessionRecording`); every field has a
   * privacy-first default (inputs masked, `sa-block` elements not recorded, `sa-mask` text masked).
   * @default {} (see RecordingConfig)
   */
  recording?: RecordingConfig;
  /** Send uncaught errors and unhandled promise rejections. @default false */
  enableErrorTracking?: boolean;
  /**
   * Assign A/B experiments (`getVariant`, `isInVariant`, `getExperimentAssignments`) and send
   * `experiment_exposure`; the experiments code is a chunk loaded at start only when this is on.
   * Off, those operations answer null, false and [] and nothing is stored or sent.
   * @default false
   */
  enableABTesting?: boolean;
  /** A/B testing configuration: the experiments, inline or by URL (see {@link ABTestConfig}). @default undefined (no experiments) */
  abTestConfig?: ABTestConfig;
  /**
   * Journal the worker's queue to IndexedDB so events survive a crash, a reload or an offline
   * period (offline failures use up no retry; with `discardAfterRetries: false`, other failures
   * do not drop events either).
   * @default false
   */
  persistQueue?: boolean;
  /**
   * Address of the worker script (`worker.js` beside this package's files), tried before the
   * worker file beside the library and the inline worker. Set it when your bundler does not copy
   * the worker file.
   * @default undefined
   */
  workerUrl?: string | URL;
  /**
   * `false` runs the delivery core on the main thread at once, without trying a worker: for pages
   * whose Content-Security-Policy forbids workers (`worker-src`), which would otherwise log one
   * CSP violation per attempt before the client falls back to the same in-process core.
   * @default true
   */
  worker?: boolean;
  /** gzip request bodies in the worker where `CompressionStream` exists. @default true */
  compress?: boolean;
  /**
   * Called when events are dropped without being accepted (queue overflow, retries exhausted,
   * rejected by the server, `clearQueue()`). An exception it throws is caught and logged.
   * @default undefined
   */
  onDiscard?: (info: DiscardInfo) => void;
  /**
   * Whether the visitor agreed to be counted. `'pending'`: events are held in memory only (at most
   * `maxQueueSize`), nothing is written to storage and nothing leaves the page until `optIn()`
   * sends them or `optOut()` drops them. `'denied'`: events are dropped. The visitor's own choice
   * (`optIn()`/`optOut()`) is stored and wins over this on later loads.
   * @default 'granted'
   */
  consent?: ConsentState;
  /**
   * Treat `navigator.doNotTrack === '1'` or `navigator.globalPrivacyControl === true` as
   * `consent: 'denied'` (a stored `optIn()` still wins: the visitor said yes on this site).
   * @default false
   */
  respectDoNotTrack?: boolean;
  /**
   * Where the client keeps its ids (anonymous id, session, user id, super properties).
   * `'memory'`: nothing is stored on the device (no localStorage, no IndexedDB: `persistQueue` is
   * off), so the anonymous id and the session last as long as the page; the server can still count
   * unique visitors from its daily-rotating hash (docs/decisions.md, "Cookieless mode").
   * @default 'localStorage'
   */
  persistence?: 'localStorage' | 'memory';
  /**
   * Called on the page's main thread with every event before it is queued: return it (changed or
   * not) to send it, or `null` to drop it. Runs per event, so keep it cheap; an exception it throws
   * is caught (logged when `debug` is on) and the event is sent unchanged. Unset, it costs nothing.
   * @default undefined
   */
  beforeSend?: BeforeSend;
  /**
   * Share of sessions whose events are sent, 0–1, decided once per session from its id (a session
   * is sent whole or not at all, recordings included).
   * @default 1
   */
  sampleRate?: number;
  /**
   * Test and benchmark seam: replaces the worker start, the delivery core's dependencies and
   * browser APIs. Not part of the public API.
   * @internal
   */
  transport?: TransportOptions;
}

/** The endpoint used when none is given and there is no page to take an origin from. */
export const FALLBACK_ENDPOINT = 'http://localhost:8787';

/** Every default of {@link AnalyticsConfig}, in one place. */
export const DEFAULTS = {
  debug: false,
  sessionTimeout: 30 * 60 * 1000,
  batchSize: 20,
  flushInterval: 10_000,
  maxQueueSize: 1000,
  retryAttempts: 3,
  retryDelay: 1000,
  discardAfterRetries: true,
  enableAutoPageTracking: true,
  enablePerformanceTracking: false,
  enableHeatmapTracking: false,
  enableSessionRecording: false,
  enableErrorTracking: false,
  enableABTesting: false,
  persistQueue: false,
  compress: true,
  consent: 'granted',
  respectDoNotTrack: false,
  persistence: 'localStorage',
  sampleRate: 1,
} as const;

/** Options whose value must be one of a list. */
const CHOICES: Readonly<Record<string, readonly string[]>> = {
  consent: ['granted', 'pending', 'denied'],
  persistence: ['localStorage', 'memory'],
};

/** AnalyticsConfig with every default applied and the endpoint made absolute. */
export interface ResolvedConfig
  extends Omit<AnalyticsConfig, keyof typeof DEFAULTS | 'endpoint'>,
    DeliveryConfig {
  sessionTimeout: number;
  enableAutoPageTracking: boolean;
  enablePerformanceTracking: boolean;
  enableHeatmapTracking: boolean;
  enableSessionRecording: boolean;
  enableErrorTracking: boolean;
  enableABTesting: boolean;
  consent: ConsentState;
  respectDoNotTrack: boolean;
  persistence: 'localStorage' | 'memory';
  sampleRate: number;
}

/** Numeric options that may be 0 (the others must be positive). */
const MAY_BE_ZERO: ReadonlySet<string> = new Set(['retryAttempts', 'retryDelay', 'sampleRate']);
/** Numeric options that are counts. */
const INTEGERS: ReadonlySet<string> = new Set(['batchSize', 'maxQueueSize', 'retryAttempts']);

/**
 * Applies the defaults. An option of the wrong type, or a number out of its range, falls back to
 * its default rather than breaking delivery (a string from an env file is a common cause).
 * @param base the page address that a relative or missing `endpoint` resolves against.
 */
export function resolveConfig(config: AnalyticsConfig, base?: string): ResolvedConfig {
  const resolved: Record<string, unknown> = {
    ...config,
    apiKey: String(config.apiKey ?? ''),
    projectId: String(config.projectId ?? ''),
    endpoint: resolveEndpoint(config.endpoint, base),
  };
  for (const [key, fallback] of Object.entries(DEFAULTS)) {
    let value = (config as unknown as Record<string, unknown>)[key];
    if (typeof value === 'number' && INTEGERS.has(key)) value = Math.floor(value);
    const ok =
      typeof value === typeof fallback &&
      (typeof value !== 'number' || (Number.isFinite(value) && (value > 0 || (value === 0 && MAY_BE_ZERO.has(key))))) &&
      (CHOICES[key]?.includes(value as string) ?? true);
    resolved[key] = ok ? value : fallback;
  }
  resolved.sampleRate = Math.min(1, resolved.sampleRate as number);
  // Memory mode stores nothing on the device: the IndexedDB journal neither.
  if (resolved.persistence === 'memory') resolved.persistQueue = false;
  return resolved as unknown as ResolvedConfig;
}

/** The part of the resolved config the delivery core takes (plain data, structured-cloneable). */
export function toDeliveryConfig(config: ResolvedConfig): DeliveryConfig {
  return {
    apiKey: config.apiKey,
    projectId: config.projectId,
    endpoint: config.endpoint,
    batchSize: config.batchSize,
    flushInterval: config.flushInterval,
    maxQueueSize: config.maxQueueSize,
    retryAttempts: config.retryAttempts,
    retryDelay: config.retryDelay,
    discardAfterRetries: config.discardAfterRetries,
    debug: config.debug,
    persistQueue: config.persistQueue,
    compress: config.compress,
  };
}

/**
 * Makes the endpoint absolute, without a trailing slash. It must be absolute because a worker
 * started from a Blob URL has no base to resolve a relative address against.
 */
function resolveEndpoint(endpoint: string | undefined, base: string | undefined): string {
  let url: string;
  try {
    url = new URL(endpoint ?? (base === undefined ? FALLBACK_ENDPOINT : new URL(base).origin), base).href;
  } catch {
    url = endpoint ?? FALLBACK_ENDPOINT;
  }
  return url.replace(/\/+$/, '');
}
