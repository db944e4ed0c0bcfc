/**
 * posthog-js for the client benchmark: bundled for the page with esbuild (the package's browser
 * module, minified, as an app would ship it), and a local stand-in for PostHog's capture API that
 * answers 200 and counts the events it receives.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** Bundles posthog-js into one minified browser script that sets `window.posthog`. */
export async function bundlePosthog(root: string): Promise<string> {
  const result = await build({
    stdin: {
      contents: "import posthog from 'posthog-js';\nwindow.posthog = posthog;\n",
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

/** The stand-in capture API. */
export interface CaptureEndpoint {
  url: string;
  /** Events received by name. */
  count(event: string): number;
  /** Forgets the counts, so that each round's page is counted on its own. */
  reset(): void;
  /** Requests received (preflights excluded), by path. */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 (another port: cross-origin for the page, like our server). */
export async function startCaptureEndpoint(): Promise<CaptureEndpoint> {
  const counts = new Map<string, number>();
  const requests = new Map<string, number>();
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
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      for (const name of eventNames(Buffer.concat(chunks), url.searchParams.get('compression'))) {
        counts.set(name, (counts.get(name) ?? 0) + 1);
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
    reset: () => counts.clear(),
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Names of the events in one capture request body (gzip, base64 form, or plain JSON). */
function eventNames(body: Buffer, compression: string | null): string[] {
  if (body.length === 0) return [];
  let text: string;
  try {
    if (compression === 'gzip-js' || compression === 'gzip' || (body[0] === 0x1f && body[1] === 0x8b)) text = gunzipSync(body).toString('utf8');
    else if (compression === 'base64') {
      const data = new URLSearchParams(body.toString('utf8')).get('data') ?? '';
      text = Buffer.from(data, 'base64').toString('utf8');
    } else text = body.toString('utf8');
    const parsed: unknown = JSON.parse(text);
    const list = Array.isArray(parsed) ? parsed : isBatch(parsed) ? parsed.batch : [parsed];
    return list.map((item) => (typeof item === 'object' && item !== null && 'event' in item ? String(item.event) : '(unnamed)'));
  } catch {
    return ['(undecodable)'];
  }
}

function isBatch(value: unknown): value is { batch: unknown[] } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { batch?: unknown }).batch);
}
