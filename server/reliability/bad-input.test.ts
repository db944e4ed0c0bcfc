/**
 * Bad input at scale (SECURITY.md, "What is protected" → Hostile input): thousands of generated
 * hostile requests (`bad-input.arbitraries.ts`) at the batch endpoint, the recording endpoint and
 * the read API, on SQLite and PostgreSQL. For every one: a documented status, never a 500;
 * `{ error, code }` with a documented code for each non-2xx; no row written by a refused request;
 * and afterwards the server still answers a good request and `Object.prototype` is untouched.
 *
 * FUZZ_RUNS scales the number of runs (default 1); FUZZ_SEED fixes the seed.
 */
import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../protocol/index.js';
import type { Logger } from '../logger.js';
import { openStoredRows, type StoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { type FuzzRequest, type FuzzTarget, batchRequests, readRequests, recordingRequests } from './bad-input.arbitraries.js';
import { envNumber, report } from '../../test-support/server/reliability-support.js';

const SCALE = envNumber('FUZZ_RUNS', 1);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const RUNS: Record<(typeof STORE_KINDS)[number], { batch: number; recording: number; read: number }> = {
  sqlite: { batch: 1100, recording: 550, read: 450 },
  postgres: { batch: 450, recording: 250, read: 200 },
};
const DOCUMENTED_STATUSES = new Set([200, 400, 401, 404, 405, 413, 415, 429, 503]);
const LIMITS = { maxBatchBodyBytes: 64 * 1024, maxRecordingBodyBytes: 256 * 1024, maxEventsPerBatch: 50 };

/** One keep-alive connection for all requests, as a browser would reuse one, so a wedged connection shows. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** Sends a request over {@link agent}; rejects when no answer comes within 10 s. */
function send(base: string, r: FuzzRequest): Promise<{ res: { status: number }; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(r.path, base);
    // An explicit length: node:http would send a DELETE body unframed.
    const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
    const req = request(
      { hostname: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: r.method, headers, agent, timeout: 10_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ res: { status: res.statusCode ?? 0 }, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(r.body);
  });
}

/** A logger that keeps error lines, so a 500 logged anywhere fails the test. */
function capturingLogger(errors: string[]): Logger {
  return { debug() {}, info() {}, warn() {}, error: (message, fields) => void errors.push(`${message} ${JSON.stringify(fields)}`) };
}

const prototypeNames = () => [Object, Array, Function, String].map((c) => Object.getOwnPropertyNames(c.prototype).sort().join());

describe.each(STORE_KINDS)('bad input at scale on %s', (kind) => {
  let server: TestServer;
  let rows: StoredRows;
  let target: FuzzTarget;
  const errors: string[] = [];
  const prototypesBefore = prototypeNames();
  const tried: Record<string, Record<number, number>> = {};

  beforeAll(async () => {
    server = await startTestServer(kind, { ...LIMITS, logger: capturingLogger(errors) });
    rows = await openStoredRows(server.location);
    const other = await server.createProject();
    target = {
      projectId: server.project.id,
      writeKey: server.project.writeKey,
      readKey: server.project.readKey,
      otherProjectId: other.id,
      otherWriteKey: other.writeKey,
      ...LIMITS,
    };
  });
  afterAll(async () => {
    for (const [endpoint, statuses] of Object.entries(tried)) {
      const total = Object.values(statuses).reduce((a, b) => a + b, 0);
      report(`bad-input/${kind}/${endpoint}`, { tried: total, statuses: JSON.stringify(statuses) });
    }
    await rows?.close();
    await server?.close();
  });

  const previous: string[] = [];
  const describeRequest = (r: FuzzRequest) =>
    `${r.method} ${r.path.slice(0, 100)} ${JSON.stringify(r.headers).slice(0, 300)} body ${r.body === undefined ? 'none' : typeof r.body === 'string' ? `text ${r.body.length} ${JSON.stringify(r.body.slice(0, 100))}` : `bytes ${r.body.length}`}`;

  /** Sends one request and checks every invariant that holds whatever the input. */
  async function check(endpoint: 'batch' | 'recording' | 'read', request: FuzzRequest): Promise<void> {
    const before = await rows.count();
    let res: { status: number };
    let text: string;
    try {
      ({ res, text } = await send(server.url, request));
    } catch (error) {
      // No answer at all: name the requests before too, since they shared the connection.
      throw new Error(`no answer to ${describeRequest(request)}\n(the ones before, oldest first:\n${previous.join('\n')})`, { cause: error });
    } finally {
      previous.push(describeRequest(request));
      if (previous.length > 6) previous.shift();
    }
    const after = await rows.count();
    const counts = (tried[endpoint] ??= {});
    counts[res.status] = (counts[res.status] ?? 0) + 1;

    const context = `${request.method} ${request.path.slice(0, 200)} → ${res.status} ${text.slice(0, 300)}`;
    expect(DOCUMENTED_STATUSES.has(res.status), context).toBe(true);
    if (res.status !== 200) {
      const body = JSON.parse(text) as { error?: unknown; code?: unknown };
      expect(typeof body.error, context).toBe('string');
      expect(ERROR_STATUS[body.code as keyof typeof ERROR_STATUS], context).toBe(res.status);
      // Nothing is stored from a refused request.
      expect(after, context).toEqual(before);
      return;
    }
    const body = JSON.parse(text) as { processed?: number; stored?: number };
    if (endpoint === 'batch' && request.method === 'POST') {
      expect(after.events - before.events, context).toBeLessThanOrEqual(body.processed ?? -1);
      expect(after.chunks, context).toBe(before.chunks);
    } else if (endpoint === 'recording' && request.method === 'POST') {
      expect(after.chunks - before.chunks, context).toBeLessThanOrEqual(1);
      expect(after.events, context).toBe(before.events);
    } else {
      expect(after, context).toEqual(before);
    }
  }

  const property = (endpoint: 'batch' | 'recording' | 'read', arbitrary: (t: FuzzTarget) => fc.Arbitrary<FuzzRequest>) =>
    fc.assert(
      fc.asyncProperty(arbitrary(target), (request) => check(endpoint, request)),
      // The server keeps state between runs, so shrinking would mislead; report the failing input as it came.
      { numRuns: Math.round(RUNS[kind][endpoint] * SCALE), endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) },
    );

  it('POST /api/v1/events/batch: a documented answer to every body, header and query', { timeout: 240_000 }, () =>
    property('batch', batchRequests),
  );

  it('POST /api/v1/sessions/:sessionId/recordings: a documented answer to every body, session id and header', { timeout: 240_000 }, () =>
    property('recording', recordingRequests),
  );

  it('the read API: a documented answer to every query, session id and key', { timeout: 240_000 }, () => property('read', readRequests));

  it('still serves a good request afterwards, logged no internal error, and no prototype was polluted', async () => {
    const res = await server.postBatch([makeEvent()]);
    expect(res.status).toBe(200);
    expect(errors).toEqual([]);
    expect(prototypeNames()).toEqual(prototypesBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // No stored event carries a __proto__ property: such events are refused.
    const page = await fetch(`${server.url}/api/v1/events?limit=1000`, {
      headers: { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': server.project.id },
    });
    const { events } = (await page.json()) as { events: Array<{ properties: object }> };
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(Object.hasOwn(e.properties, '__proto__')).toBe(false);
  });
});
