/**
 * One HTTP request to the ingestion server and what came of it. No retry and no queue here: what
 * an outcome means is decided in one place (`retry-policy.ts`), and the queue (`queue.ts`) acts on it.
 *
 * Wire contract: `POST {endpoint}/api/v1/events/batch` (a bare JSON array of backend events) and
 * `POST {endpoint}/api/v1/sessions/:sessionId/recordings`, each with `Authorization: ApiKey …`,
 * `X-Project-ID`, `X-Sent-At` (for the server's clock-skew correction) and, where the body is
 * gzipped, `Content-Encoding: gzip` (docs/protocol.md, "How the bundled client uses the protocol").
 */
import type { BackendEvent } from '../protocol/wire-types.js';
import type { Compressor, FetchFn } from '../protocol/worker/core-deps.js';
import type { RejectedEvent } from '../protocol/error-codes.js';
import { parseRetryAfter } from './retry-after.js';
import type { Timers } from '../protocol/worker/timers.js';
import type { DeliveryConfig } from '../protocol/worker/worker-contract.js';




/** What a request needs besides its body. */
export interface SenderDeps extends Timers {
  fetch: FetchFn;
  now: () => number;
  /** gzip, or `undefined` to send bodies as they are. */
  compress: Compressor | undefined;
  /** Abort the request (body included) after this many ms; counted as a network failure. */
  timeoutMs: number;
}

/** The configuration a request reads. */
export type SenderConfig = Pick<DeliveryConfig, 'endpoint' | 'apiKey' | 'projectId'>;

/** How one request ended. */
export type SendOutcome =
  /** 2xx. `rejected` lists events the server refused as invalid, by index in the body. */
  | { kind: 'ok'; status: number; rejected: RejectedEvent[] }
  /**
   * Any other status, with the server's `code` and `Retry-After`. Whether it is worth another try
   * is the retry policy's call (`retry-policy.ts`), not the sender's.
   */
  | { kind: 'http'; status: number; retryAfterMs: number | undefined; code: string | undefined; message: string }
  /** No HTTP answer: offline, DNS, reset, CORS, or our timeout (`timedOut`). */
  | { kind: 'network'; timedOut: boolean; message: string }
  /**
   * The request could not be made for a reason of our own (a bug, a fetch given bad arguments):
   * not a network failure, so it is not retried as one (`retry-policy.ts`).
   */
  | { kind: 'failed'; message: string };

/** Bodies smaller than this are sent as they are: gzip would cost more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;

/** Largest body sent with `keepalive` (see {@link postJson}). */
export const KEEPALIVE_MAX_BYTES = 8 * 1024;

function bodySize(payload: string | Uint8Array): number {
  // A string's length undercounts UTF-8 bytes at most threefold: count it as the worst case.
  return typeof payload === 'string' ? payload.length * 3 : payload.length;
}

/** Default request timeout: generous, since a slow network is still a network. */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * gzip with the platform's `CompressionStream`, or `undefined` where it does not exist. Looked up
 * when called, never at import (docs/architecture.md, "Conventions").
 */
export function platformGzip(): Compressor | undefined {
  if (typeof CompressionStream !== 'function') return undefined;
  return async (data) => {
    // Written and read by hand, not through `new Blob([data]).stream()` and `new Response(…)`: in
    // Chromium that route cost the page's main thread, over the requests of a large burst, as much
    // as turning compression off saved (measured with `npm run bench:client`, whose figures are in
    // bench/RESULTS.md; presumably a dedicated worker's Blobs are registered through its parent
    // page). This way compression costs the page nothing (docs/decisions.md, "Compression").
    const gzip = new CompressionStream('gzip');
    const writer = gzip.writable.getWriter();
    // Errors surface on the reading side; these promises must not be reported as unhandled.
    writer.write(data as Uint8Array<ArrayBuffer>).catch(() => undefined);
    writer.close().catch(() => undefined);
    const reader = gzip.readable.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      parts.push(part.value);
      size += part.value.length;
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  };
}

/** `POST {endpoint}/api/v1/events/batch` with `events` as a bare JSON array. */
export function sendBatch(events: readonly BackendEvent[], config: SenderConfig, deps: SenderDeps): Promise<SendOutcome> {
  return postJson(`${config.endpoint}/api/v1/events/batch`, JSON.stringify(events), config, deps);
}

/**
 * `POST {endpoint}/api/v1/sessions/:sessionId/recordings` with a pre-serialised chunk body
 * (the uploader serialises each recorded event once, to measure it).
 */
export function sendRecordingChunk(
  sessionId: string,
  body: string,
  config: SenderConfig,
  deps: SenderDeps,
): Promise<SendOutcome> {
  return postJson(`${config.endpoint}/api/v1/sessions/${encodeURIComponent(sessionId)}/recordings`, body, config, deps);
}

/** Posts a JSON `body` to `url` with the project's headers and classifies the answer. */
export async function postJson(url: string, body: string, config: SenderConfig, deps: SenderDeps): Promise<SendOutcome> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Authorization: `ApiKey ${config.apiKey}`,
    'X-Project-ID': config.projectId,
    'X-Sent-At': new Date(deps.now()).toISOString(),
  };
  const payload = await maybeCompress(body, deps.compress);
  if (payload !== body) headers['Content-Encoding'] = 'gzip';

  const controller = new AbortController();
  const timer = deps.setTimeout(() => controller.abort(), deps.timeoutMs);
  try {
    let response: Response;
    try {
      response = await deps.fetch(url, {
        method: 'POST',
        headers,
        body: payload as BodyInit,
        signal: controller.signal,
        // The server sets no cookies and authenticates by header; sending cookies would only leak.
        credentials: 'omit',
        // A request in flight when the page goes away is finished by the browser rather than
        // dropped. Browsers cap keepalive bodies in flight at 64 KB in all, beacons included: only
        // small bodies ask for it, so the unload path's beacons keep room.
        keepalive: bodySize(payload) <= KEEPALIVE_MAX_BYTES,
      });
    } catch (error) {
      const timedOut = controller.signal.aborted;
      // fetch reports every network failure as a TypeError (an abort as an AbortError); anything
      // else thrown here is ours, and retrying it would only repeat it.
      if (!timedOut && !isFetchFailure(error)) return { kind: 'failed', message: `request to ${url} could not be made: ${describe(error)}` };
      return {
        kind: 'network',
        timedOut,
        message: timedOut ? `no answer from ${url} within ${deps.timeoutMs} ms` : `request to ${url} failed: ${describe(error)}`,
      };
    }
    return await classify(response, deps.now());
  } finally {
    deps.clearTimeout(timer);
  }
}

function isFetchFailure(error: unknown): boolean {
  return error instanceof TypeError || (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError');
}

async function maybeCompress(body: string, compress: Compressor | undefined): Promise<string | Uint8Array> {
  // body.length ≤ UTF-8 byte length, so this never skips a body that is large enough.
  if (compress === undefined || body.length < COMPRESS_MIN_BYTES) return body;
  try {
    return await compress(new TextEncoder().encode(body));
  } catch {
    // Compression is an optimisation; the server takes the plain body just as well.
    return body;
  }
}

async function classify(response: Response, now: number): Promise<SendOutcome> {
  const status = response.status;
  const parsed = await readJson(response);
  if (response.ok) return { kind: 'ok', status, rejected: rejectedOf(parsed) };
  const code = stringField(parsed, 'code');
  const message = `HTTP ${status}${code ? ` ${code}` : ''}: ${stringField(parsed, 'error') ?? response.statusText}`;
  return { kind: 'http', status, retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), now), code, message };
}

/** The body as JSON, or `undefined` when it is empty, not JSON, or cut off. */
async function readJson(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    // A 200 whose body is lost still means the server committed the batch (it answers only after
    // the commit: docs/decisions.md, "Group commit and commit-before-answer"), so the status alone
    // decides.
    return undefined;
  }
}

function rejectedOf(body: unknown): RejectedEvent[] {
  if (typeof body !== 'object' || body === null) return [];
  const errors = (body as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return [];
  const out: RejectedEvent[] = [];
  for (const item of errors as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { index, error } = item as { index?: unknown; error?: unknown };
    if (typeof index === 'number' && Number.isInteger(index)) out.push({ index, error: typeof error === 'string' ? error : 'rejected' });
  }
  return out;
}

function stringField(body: unknown, key: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
