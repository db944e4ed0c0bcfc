/**
 * posthog-js for the client benchmark: bundled for the page with esbuild (the package's browser
 * module, minified, as an app would ship it), and a local stand-in for PostHog's capture API that
 * answers 200 and counts the events it receives, answers the remote-config request with session
 * recording on, and tallies what the recordings it receives hold.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';

/**
 * Bundles posthog-js into one minified browser script that sets `window.posthog`. With `recorder`,
 * the bundle also holds its session recorder (`posthog-js/dist/posthog-recorder`: rrweb, its console
 * and network plugins and the code that drives them), which posthog-js otherwise loads from its
 * server once remote config turns recording on; posthog-js uses it when it finds it on the page.
 */
export async function bundlePosthog(root: string, options: { recorder?: boolean } = {}): Promise<string> {
  const recorder = options.recorder === true ? "import 'posthog-js/dist/posthog-recorder';\n" : '';
  const result = await build({
    stdin: {
      contents: `import posthog from 'posthog-js';\n${recorder}window.posthog = posthog;\n`,
      resolveDir: root,
      loader: 'js',
    },
    absWorkingDir: root,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

/**
 * The options a performance-minded app would give posthog-js: every automatic feature off
 * (autocapture, page views and page leaves, session recording, surveys, heatmaps, dead clicks,
 * exceptions, web experiments, feature-flag requests, loading extra scripts). Batching,
 * compression and persistence stay at their defaults: they are how it delivers.
 */
export function posthogOptions(apiHost: string): Record<string, unknown> {
  return {
    api_host: apiHost,
    autocapture: false,
    capture_pageview: false,
    capture_pageleave: false,
    disable_session_recording: true,
    disable_surveys: true,
    disable_surveys_automatic_display: true,
    disable_product_tours: true,
    disable_conversations: true,
    disable_web_experiments: true,
    capture_heatmaps: false,
    enable_heatmaps: false,
    capture_dead_clicks: false,
    capture_exceptions: false,
    capture_performance: false,
    rageclick: false,
    advanced_disable_flags: true,
    advanced_disable_decide: true,
    advanced_disable_feature_flags: true,
    advanced_disable_feature_flags_on_first_load: true,
    disable_external_dependency_loading: true,
    // The user agent is HeadlessChrome: without this posthog-js drops every event as a bot's, early
    // and cheaply, and would be measured doing nothing.
    opt_out_useragent_filter: true,
    // posthog-js drops captures beyond 10/s (bursts of 100) by default; its docs say to raise the
    // limit when an app legitimately captures in bursts, as this benchmark does. Dropped events
    // would measure the cost of dropping.
    rate_limiting: { events_per_second: 100_000, events_burst_limit: 100_000 },
  };
}

/** The token the benchmark's posthog pages are initialised with. */
export const POSTHOG_TOKEN = 'phc_client_benchmark';

/**
 * posthog-js with its session recorder, as {@link posthogOptions} otherwise. Recording starts once
 * the remote config (answered by the stand-in, {@link REMOTE_CONFIG}) enables it, so flags and
 * remote config are not disabled; feature flags are. With `capture`, console log recording
 * (`enable_recording_console_log`) and network timing (`capture_performance.network_timing`: the
 * recorder's network plugin; without headers or bodies it reads resource timing entries and does
 * not wrap fetch or XHR); without it, both are off on the client, which wins over remote config.
 */
export function posthogRecordingOptions(apiHost: string, capture: boolean): Record<string, unknown> {
  const options = posthogOptions(apiHost);
  for (const key of ['disable_session_recording', 'advanced_disable_flags', 'advanced_disable_decide', 'capture_performance']) delete options[key];
  return {
    ...options,
    disable_session_recording: false,
    enable_recording_console_log: capture,
    capture_performance: capture ? { network_timing: true, web_vitals: false } : false,
    session_recording: { recordHeaders: false, recordBody: false },
  };
}

/**
 * What the stand-in answers to posthog-js's remote-config request (`/array/<token>/config`): what
 * PostHog answers for a project with session replay, console logs and network timing turned on,
 * no sampling, no minimum duration, no triggers, no feature flags.
 */
export const REMOTE_CONFIG = {
  token: POSTHOG_TOKEN,
  supportedCompression: ['gzip', 'gzip-js'],
  hasFeatureFlags: false,
  autocapture_opt_out: true,
  capturePerformance: { network_timing: true, web_vitals: false },
  autocaptureExceptions: false,
  analytics: { endpoint: '/i/v0/e/' },
  elementsChainAsString: true,
  sessionRecording: {
    endpoint: '/s/',
    consoleLogRecordingEnabled: true,
    recorderVersion: 'v2',
    sampleRate: null,
    minimumDurationMilliseconds: null,
    linkedFlag: null,
    networkPayloadCapture: null,
    urlTriggers: [],
    urlBlocklist: [],
    eventTriggers: [],
  },
  heatmaps: false,
  surveys: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
} as const;

/** What the session recordings the stand-in received hold, summed over its uploads. */
export interface RecordingTally {
  /** `$snapshot` events (one per upload chunk). */
  snapshots: number;
  /** rrweb events in them. */
  rrwebEvents: number;
  /** Console entries (rrweb console plugin events). */
  consoleEntries: number;
  /** Network entries (in the network plugin's events), by URL. */
  networkUrls: string[];
}

/** The stand-in capture API. */
export interface CaptureEndpoint {
  url: string;
  /** Events received by name. */
  count(event: string): number;
  /** What the recordings received so far hold. */
  recording(): RecordingTally;
  /** Requests for the remote config. */
  configRequests(): number;
  /** Forgets the counts and the recordings, so that each round's page is counted on its own. */
  reset(): void;
  /** Requests received (preflights excluded), by path. */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 (another port: cross-origin for the page, like our server). */
export async function startCaptureEndpoint(): Promise<CaptureEndpoint> {
  const counts = new Map<string, number>();
  const requests = new Map<string, number>();
  let tally = emptyTally();
  let configRequests = 0;
  const server = createServer((req, res) => {
    const cors = {
      'access-control-allow-origin': req.headers.origin ?? '*',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-max-age': '7200',
    };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.set(url.pathname, (requests.get(url.pathname) ?? 0) + 1);
    if (req.method === 'GET' && url.pathname === `/array/${POSTHOG_TOKEN}/config`) {
      configRequests++;
      res.writeHead(200, { ...cors, 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(REMOTE_CONFIG));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      for (const event of decodeEvents(Buffer.concat(chunks), url.searchParams.get('compression'))) {
        const name = typeof event === 'object' && event !== null && 'event' in event ? String(event.event) : '(unnamed)';
        counts.set(name, (counts.get(name) ?? 0) + 1);
        if (name === '$snapshot') tallySnapshot(tally, event as object);
      }
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      res.end('{"status":1}');
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    count: (event) => counts.get(event) ?? 0,
    recording: () => ({ ...tally, networkUrls: [...tally.networkUrls] }),
    configRequests: () => configRequests,
    reset: () => {
      counts.clear();
      tally = emptyTally();
      configRequests = 0;
    },
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const emptyTally = (): RecordingTally => ({ snapshots: 0, rrwebEvents: 0, consoleEntries: 0, networkUrls: [] });

/**
 * Adds one `$snapshot` event's rrweb events to `tally`: console entries are plugin events (type 6)
 * of `rrweb/console@1`, network entries the `requests` of `rrweb/network@1` plugin events (posthog-js
 * compresses full snapshots and mutations only, so plugin events arrive as plain JSON).
 */
function tallySnapshot(tally: RecordingTally, event: object): void {
  tally.snapshots++;
  const data = (event as { properties?: { $snapshot_data?: unknown } }).properties?.$snapshot_data;
  for (const item of Array.isArray(data) ? data : [data]) {
    if (typeof item !== 'object' || item === null) continue;
    tally.rrwebEvents++;
    const { type, data: payload } = item as { type?: unknown; data?: { plugin?: unknown; payload?: { requests?: unknown } } };
    if (type !== 6 || payload === undefined) continue;
    if (payload.plugin === 'rrweb/console@1') tally.consoleEntries++;
    else if (payload.plugin === 'rrweb/network@1' && Array.isArray(payload.payload?.requests)) {
      for (const request of payload.payload.requests) tally.networkUrls.push(String((request as { name?: unknown }).name));
    }
  }
}

/** The events in one capture request body (gzip, base64 form, or plain JSON). */
function decodeEvents(body: Buffer, compression: string | null): unknown[] {
  if (body.length === 0) return [];
  let text: string;
  try {
    if (compression === 'gzip-js' || compression === 'gzip' || (body[0] === 0x1f && body[1] === 0x8b)) text = gunzipSync(body).toString('utf8');
    else if (compression === 'base64') {
      const data = new URLSearchParams(body.toString('utf8')).get('data') ?? '';
      text = Buffer.from(data, 'base64').toString('utf8');
    } else text = body.toString('utf8');
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : isBatch(parsed) ? parsed.batch : [parsed];
  } catch {
    return [{ event: '(undecodable)' }];
  }
}

function isBatch(value: unknown): value is { batch: unknown[] } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { batch?: unknown }).batch);
}
