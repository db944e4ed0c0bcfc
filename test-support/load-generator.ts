/**
 * A load generator for the ingestion server: `concurrency` lanes, each posting batches of fresh
 * events to `POST /api/v1/events/batch` back to back over keep-alive connections, recording what
 * became of every event: acknowledged (200), refused with a clean answer (e.g. 503 with
 * `Retry-After`), or unanswered (the connection dropped, the server died). Tests compare those
 * records with what the database holds afterwards. Figures are for printing, not for asserting.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

/** Options of {@link startLoad}. */
export interface LoadOptions {
  /** Base URL of the server, e.g. `http://127.0.0.1:8787`. */
  url: string;
  projectId: string;
  writeKey: string;
  /** Requests in flight at once (one per lane). @default 8 */
  concurrency?: number;
  /** Events per request. @default 20 */
  batchSize?: number;
  /** Stops by itself after this long, ms; otherwise runs until `stop()`. */
  durationMs?: number;
  /** Prefix of the event ids, unique per run. @default a random one */
  runId?: string;
  /**
   * Resend a batch refused with 429 or 503 after its `Retry-After` (at least `errorBackoffMs`)
   * until it is acknowledged or the run stops, as the real client does. When false, a refused
   * batch is recorded and dropped. @default false
   */
  resendRefused?: boolean;
  /** Pause of a lane after a request got no answer, so a dead server is not spun on, ms. @default 20 */
  errorBackoffMs?: number;
  /** A request with no answer after this long is abandoned and counted unanswered, ms. @default 30000 */
  requestTimeoutMs?: number;
}

/** A batch that got an answer other than 200. */
export interface RefusedBatch {
  status: number;
  code: string | undefined;
  retryAfter: string | null;
  ids: string[];
}

/** What a run did. */
export interface LoadResult {
  /** Wall time from start to the last lane ending, ms. */
  durationMs: number;
  /** Requests sent, resends included. */
  requests: number;
  /** Distinct events put into requests. */
  eventsSent: number;
  /** Ids of every event the server acknowledged with a 200. */
  acknowledged: string[];
  /** Batches answered with anything but 200, once per answer (a resent batch may appear again). */
  refused: RefusedBatch[];
  /** Batches whose request got no answer (dropped connection, timeout, server gone). */
  unanswered: string[][];
  /** Answers by status; `'none'` for unanswered requests. */
  statuses: Record<string, number>;
  /** Unanswered requests by error code (`ECONNREFUSED`, `ECONNRESET`, …). */
  errors: Record<string, number>;
  /** Latency of each answered request, ms, in completion order. */
  latenciesMs: number[];
}

/** A run in progress. */
export interface LoadRun {
  /** Resolves when the run ended (duration reached, or `stop()`). */
  readonly done: Promise<LoadResult>;
  /** Asks every lane to stop after its current request; resolves with the result. */
  stop(): Promise<LoadResult>;
  /** Live counters, for progress checks while it runs. */
  progress(): { requests: number; acknowledged: number; unanswered: number };
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: string;
}

/** One POST over `agent`; rejects when no complete answer comes. */
function post(agent: Agent, url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent, timeout: timeoutMs },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('answer aborted')));
        res.on('end', () => {
          if (!res.complete) return reject(new Error('answer cut off'));
          const retryAfter = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, body: text });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function codeOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The `p`-th percentile (0–100) of `values`, nearest rank; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Starts a load run against `options.url`. */
export function startLoad(options: LoadOptions): LoadRun {
  const concurrency = options.concurrency ?? 8;
  const batchSize = options.batchSize ?? 20;
  const runId = options.runId ?? `load-${Math.random().toString(36).slice(2, 10)}`;
  const backoff = options.errorBackoffMs ?? 20;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const url = new URL('/api/v1/events/batch', options.url);
  const headers = {
    'content-type': 'application/json',
    authorization: `ApiKey ${options.writeKey}`,
    'x-project-id': options.projectId,
  };
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const result: LoadResult = {
    durationMs: 0,
    requests: 0,
    eventsSent: 0,
    acknowledged: [],
    refused: [],
    unanswered: [],
    statuses: {},
    errors: {},
    latenciesMs: [],
  };
  let stopped = false;
  let counter = 0;
  const started = performance.now();
  const deadline = options.durationMs === undefined ? Infinity : started + options.durationMs;
  const running = () => !stopped && performance.now() < deadline;

  function makeBatch(): { ids: string[]; body: string } {
    const now = new Date().toISOString();
    const ids: string[] = [];
    const events = [];
    for (let i = 0; i < batchSize; i++) {
      // Zero-padded counters keep ids in order, so the dedupe index grows at its end
      // (docs/decisions.md, "UUIDv7 event ids").
      const id = `${runId}-${String(counter++).padStart(10, '0')}`;
      ids.push(id);
      events.push({
        event_id: id,
        event_type: 'load_test',
        user_id: `user-${counter % 97}`,
        session_id: `session-${counter % 31}`,
        timestamp: now,
        properties: { n: counter, plan: 'pro', beta: counter % 2 === 0 },
        user_agent: 'load-generator',
      });
    }
    result.eventsSent += ids.length;
    return { ids, body: JSON.stringify(events) };
  }

  async function lane(): Promise<void> {
    let pending: { ids: string[]; body: string } | undefined;
    while (running()) {
      const batch = pending ?? makeBatch();
      pending = undefined;
      const sentAt = performance.now();
      result.requests += 1;
      let answer: Answer;
      try {
        answer = await post(agent, url, headers, batch.body, timeoutMs);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const key = typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
        result.errors[key] = (result.errors[key] ?? 0) + 1;
        result.statuses.none = (result.statuses.none ?? 0) + 1;
        result.unanswered.push(batch.ids);
        await sleep(backoff);
        continue;
      }
      result.latenciesMs.push(performance.now() - sentAt);
      result.statuses[answer.status] = (result.statuses[answer.status] ?? 0) + 1;
      if (answer.status === 200) {
        for (const id of batch.ids) result.acknowledged.push(id);
        continue;
      }
      result.refused.push({ status: answer.status, code: codeOf(answer.body), retryAfter: answer.retryAfter, ids: batch.ids });
      if (options.resendRefused && (answer.status === 429 || answer.status === 503)) {
        pending = batch;
        const seconds = Number(answer.retryAfter);
        await sleep(Math.max(backoff, Number.isFinite(seconds) ? seconds * 1000 : 0));
      }
    }
  }

  const done = Promise.all(Array.from({ length: concurrency }, () => lane())).then(() => {
    agent.destroy();
    result.durationMs = performance.now() - started;
    return result;
  });

  return {
    done,
    stop() {
      stopped = true;
      return done;
    },
    progress: () => ({ requests: result.requests, acknowledged: result.acknowledged.length, unanswered: result.unanswered.length }),
  };
}

/**
 * Resident set size of process `pid` in bytes, from `/proc/<pid>/status` (Linux); undefined when
 * the process is gone or `/proc` is not there.
 */
export function readRssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** Samples the RSS of `pid` every `everyMs` until `stop()`; returns the samples in bytes. */
export function sampleRss(pid: number, everyMs = 250): { samples: number[]; stop(): number[] } {
  const samples: number[] = [];
  const take = () => {
    const rss = readRssBytes(pid);
    if (rss !== undefined) samples.push(rss);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}
