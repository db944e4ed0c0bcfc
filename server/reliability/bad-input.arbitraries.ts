/**
 * fast-check arbitraries of hostile requests for `bad-input.test.ts`: random JSON, near-valid
 * events and recording chunks with one thing wrong, huge and deeply nested values, prototype keys,
 * wrong types, and header and query-string variants. A request is plain data, sent by the test.
 */
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

/** One request to send. */
export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** What the arbitraries need to know about the server under test. */
export interface FuzzTarget {
  projectId: string;
  writeKey: string;
  readKey: string;
  otherProjectId: string;
  otherWriteKey: string;
  /** The server's batch body limit (decompressed), bytes. */
  maxBatchBodyBytes: number;
  /** The server's recording body limit (decompressed), bytes. */
  maxRecordingBodyBytes: number;
  /** The server's most events per batch. */
  maxEventsPerBatch: number;
}

const SPECIAL_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** `s` with lone surrogates replaced, so encodeURIComponent takes it (ES2024; Node 20 has it). */
const wellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();

/** Strings that have broken parsers, stores or logs somewhere. */
const nastyString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '😀',
  '\u202etxt.exe',
  "'; DROP TABLE events; --",
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '%00',
  '../../etc/passwd',
  '\r\nX-Injected: 1',
  '2026-11-22T10:00:00.000Z',
  '2026-13-45T25:61:61.000Z',
  '9999999999999999999999',
);

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnitString = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength });

const anyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  codeUnitString(40),
  nastyString,
  // Just over the id and event_type limits (200).
  fc.integer({ min: 195, max: 205 }).map((n) => 'x'.repeat(n)),
);

/** Printable ASCII: what a header value can carry through fetch. */
const headerString = (maxLength: number) =>
  fc.array(fc.integer({ min: 0x21, max: 0x7e }), { maxLength }).map((codes) => String.fromCharCode(...codes));

const deepJson = (maxDepth: number) =>
  fc.tuple(fc.integer({ min: 1, max: maxDepth }), fc.boolean()).map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  );

/** A value for a field: JSON of any shape, strings, edge numbers, deep nesting. JSON text. */
const fieldValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: anyString.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', '0', '-0', '-1', '1e308', '-1e308', '1e400', '9007199254740993', '0.1', '[]', '{}') },
  { weight: 1, arbitrary: fc.date({ noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString())) },
  { weight: 1, arbitrary: deepJson(3000) },
  { weight: 1, arbitrary: fc.integer({ min: 32 * 1024 - 2, max: 32 * 1024 + 2 }).map((n) => JSON.stringify('y'.repeat(n))) },
);

/** A valid backend event as a list of [key, JSON text] members. */
function baseEvent(id: string): Array<[string, string]> {
  return [
    ['event_id', JSON.stringify(`fuzz-${id}`)],
    ['event_type', '"fuzz_event"'],
    ['user_id', '"user-1"'],
    ['session_id', '"session-1"'],
    ['timestamp', JSON.stringify(new Date(Date.UTC(2026, 10, 22, 10)).toISOString())],
    ['properties', '{"plan":"pro","n":3,"beta":true,"none":null}'],
    ['user_agent', '"fuzz-agent"'],
  ];
}

/**
 * Members are kept as text and joined by hand so that `__proto__` is a real key of the JSON, not a
 * prototype assignment that JSON.stringify would drop.
 */
function objectText(members: Array<[string, string]>): string {
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

type Mutation =
  | { kind: 'none' }
  | { kind: 'set'; key: string; value: string }
  | { kind: 'delete'; key: string }
  | { kind: 'property'; key: string; value: string }
  | { kind: 'many-properties'; n: number }
  | { kind: 'not-an-object'; value: string };

const EVENT_FIELDS = ['event_id', 'event_type', 'user_id', 'session_id', 'timestamp', 'properties', 'user_agent', 'ip_address'];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom(...EVENT_FIELDS, ...SPECIAL_KEYS), value: fieldValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.constantFrom(...EVENT_FIELDS) }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('property' as const), key: fc.oneof(anyString, fc.constantFrom(...SPECIAL_KEYS)), value: fieldValue }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('many-properties' as const), n: fc.integer({ min: 250, max: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('not-an-object' as const), value: fieldValue }) },
);

function applyMutation(members: Array<[string, string]>, m: Mutation): string {
  switch (m.kind) {
    case 'none':
      return objectText(members);
    case 'set':
      return objectText([...members.filter(([k]) => k !== m.key), [m.key, m.value]]);
    case 'delete':
      return objectText(members.filter(([k]) => k !== m.key));
    case 'property':
      return objectText([...members.filter(([k]) => k !== 'properties'), ['properties', objectText([['plan', '"pro"'], [m.key, m.value]])]]);
    case 'many-properties':
      return objectText([
        ...members.filter(([k]) => k !== 'properties'),
        ['properties', objectText(Array.from({ length: m.n }, (_, i) => [`k${i}`, String(i)] as [string, string]))],
      ]);
    case 'not-an-object':
      return m.value;
  }
}

/** One near-valid event as JSON text: valid, or with one field set, removed or wrong. */
export const eventText = fc.tuple(fc.uuid(), mutation).map(([id, m]) => applyMutation(baseEvent(id), m));

/** A body for the batch endpoint. */
function batchBody(t: FuzzTarget): fc.Arbitrary<string | Uint8Array> {
  const validBatch = fc.array(eventText, { maxLength: 25 }).map((events) => `[${events.join(',')}]`);
  return fc.oneof(
    { weight: 8, arbitrary: validBatch },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: codeUnitString(200) },
    { weight: 1, arbitrary: validBatch.chain((text) => fc.nat(Math.max(0, text.length - 1)).map((n) => text.slice(0, n))) },
    { weight: 1, arbitrary: deepJson(100_000) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: t.maxEventsPerBatch + 1, max: t.maxEventsPerBatch + 30 }).map((n) => JSON.stringify(Array.from({ length: n }, () => ({ event_type: 'x' })))),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 3 }).map((k) => JSON.stringify([{ event_type: 'big', properties: { s: 'z'.repeat(t.maxBatchBodyBytes * k) } }])),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  );
}

/** A body for the recording endpoint. */
function recordingBody(t: FuzzTarget): fc.Arbitrary<string | Uint8Array> {
  const recordedEvent = fc.tuple(fc.nat(10), fc.oneof(fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), deepJson(700), fieldValue)).map(
    ([type, data]) => objectText([['type', String(type)], ['data', data], ['timestamp', '1763805600000']]),
  );
  const base = (events: string[]): Array<[string, string]> => [
    ['events', `[${events.join(',')}]`],
    ['duration', '1.5'],
    ['start_url', '"https://app.example.com/"'],
    ['user_id', '"user-1"'],
    ['is_final', 'false'],
    ['event_offset', '0'],
  ];
  const fields = ['events', 'duration', 'start_url', 'user_id', 'is_final', 'event_offset'];
  const chunk = fc
    .tuple(
      fc.array(recordedEvent, { maxLength: 8 }),
      fc.option(fc.tuple(fc.constantFrom(...fields, ...SPECIAL_KEYS), fieldValue), { nil: undefined, freq: 2 }),
      fc.nat(1_000_000),
    )
    .map(([events, change, offset]) => {
      const members = base(events).map(([k, v]): [string, string] => (k === 'event_offset' ? [k, String(offset)] : [k, v]));
      return objectText(change === undefined ? members : [...members.filter(([k]) => k !== change[0]), [change[0], change[1]]]);
    });
  return fc.oneof(
    { weight: 8, arbitrary: chunk },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: codeUnitString(200) },
    { weight: 1, arbitrary: deepJson(100_000) },
    {
      weight: 1,
      arbitrary: fc.constant(
        objectText([...base([objectText([['type', '2'], ['data', JSON.stringify('w'.repeat(t.maxRecordingBodyBytes))], ['timestamp', '1']])])]),
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  );
}

/** Credentials: mostly right, so bodies reach validation; otherwise wrong in every way. */
function credentials(t: FuzzTarget, need: 'write' | 'read'): fc.Arbitrary<Record<string, string>> {
  const key = need === 'write' ? t.writeKey : t.readKey;
  const wrongKind = need === 'write' ? t.readKey : t.writeKey;
  const authorization = fc.oneof(
    { weight: 30, arbitrary: fc.constant(`ApiKey ${key}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '',
        'ApiKey',
        `ApiKey ${wrongKind}`,
        `ApiKey ${t.otherWriteKey}`,
        `Bearer ${key}`,
        `apikey ${key}`,
        `ApiKey  ${key}`,
        `ApiKey ${key} extra`,
        `ApiKey ${key.slice(0, -1)}`,
        `ApiKey ${key}x`,
        `Basic ${Buffer.from(`${t.projectId}:${key}`).toString('base64')}`,
        `ApiKey ${'k'.repeat(4000)}`,
      ),
    },
    { weight: 1, arbitrary: headerString(80).map((s) => `ApiKey ${s}`) },
    { weight: 1, arbitrary: headerString(80) },
  );
  const projectId = fc.oneof(
    { weight: 30, arbitrary: fc.constant(t.projectId) },
    { weight: 3, arbitrary: fc.constantFrom('', t.otherProjectId, '__proto__', 'constructor', 'proj_unknown', `${t.projectId} `, 'p'.repeat(3000)) },
    { weight: 1, arbitrary: headerString(60) },
  );
  return fc.tuple(authorization, projectId).map(([a, p]) => {
    const headers: Record<string, string> = {};
    if (a !== '') headers.authorization = a;
    if (p !== '') headers['x-project-id'] = p;
    return headers;
  });
}

const contentType = fc.oneof(
  { weight: 30, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=x-unknown',
      'APPLICATION/JSON',
      'application/jsonx',
      'application/*',
      'text/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
    ),
  },
  { weight: 1, arbitrary: headerString(40) },
);

type Encoding = 'none' | 'gzip' | 'deflate' | 'label-only' | 'truncated-gzip' | 'br' | 'identity' | 'gzip, gzip' | 'x-custom' | 'GZIP';

const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 10, arbitrary: fc.constant('none' as const) },
  { weight: 3, arbitrary: fc.constant('gzip' as const) },
  { weight: 2, arbitrary: fc.constantFrom('deflate', 'label-only', 'truncated-gzip', 'br', 'identity', 'gzip, gzip', 'x-custom', 'GZIP') as fc.Arbitrary<Encoding> },
);

function encode(body: string | Uint8Array, how: Encoding): { body: string | Uint8Array; header?: string } {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  switch (how) {
    case 'none':
      return { body };
    case 'gzip':
      return { body: gzipSync(bytes), header: 'gzip' };
    case 'deflate':
      return { body: deflateSync(bytes), header: 'deflate' };
    case 'truncated-gzip': {
      const gz = gzipSync(bytes);
      return { body: gz.subarray(0, Math.floor(gz.length / 2)), header: 'gzip' };
    }
    case 'label-only':
      return { body, header: 'gzip' };
    default:
      return { body: how === 'GZIP' ? gzipSync(bytes) : body, header: how };
  }
}

/** A query string of known and unknown parameters, repeated ones and hostile values included. */
const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('limit', 'cursor', 'event_type', 'user_id', 'session_id', 'from', 'to', 'api_key', 'project_id', 'sent_at', '__proto__', 'constructor', 'limit[]', '__proto__[x]'),
        fc.string({ maxLength: 10 }),
      ),
      fc.oneof(
        fc.constantFrom('', '1', '0', '-1', '1000', '1001', '1.5', 'NaN', 'Infinity', '1e3', '2026-11-22T10:00:00.000Z', '2026-99-99', '99999999999999999999'),
        anyString,
        fc.base64String({ maxLength: 60 }),
        fc.integer({ min: 500, max: 600 }).map((n) => 'q'.repeat(n)),
      ),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(wellFormed(v))}`).join('&')}`));

/** A session id for a URL path: plain, or anything else, percent-encoded. */
const sessionSegment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('s1', 'session-1', 'A_b-9', 'x'.repeat(128)) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('x'.repeat(129), 'a.b', '..', '%2e%2e', '..%2F..%2Fetc', '%00', 'a%20b', '%E2%82%AC', '__proto__', 'constructor', '%ZZ', 'a%2Fb', '%F0%9F%98%80'),
  },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map((s) => encodeURIComponent(wellFormed(s))) },
);

const method = (usual: string) =>
  fc.oneof({ weight: 14, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH') });

function ingest(t: FuzzTarget, path: fc.Arbitrary<string>, body: fc.Arbitrary<string | Uint8Array>): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({ m: method('POST'), path, query: fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString }), auth: credentials(t, 'write'), type: contentType, enc: encoding, body })
    .map(({ m, path: p, query, auth, type, enc, body: b }) => {
      const encoded = encode(b, enc);
      const headers: Record<string, string> = { ...auth };
      if (type !== '') headers['content-type'] = type;
      if (encoded.header !== undefined) headers['content-encoding'] = encoded.header;
      // GET and HEAD carry no body in fetch.
      return m === 'GET' ? { method: m, path: p + query, headers } : { method: m, path: p + query, headers, body: encoded.body };
    });
}

/** Requests for `POST /api/v1/events/batch`. */
export function batchRequests(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return ingest(t, fc.constant('/api/v1/events/batch'), batchBody(t));
}

/** Requests for `POST /api/v1/sessions/:sessionId/recordings`. */
export function recordingRequests(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  return ingest(t, sessionSegment.map((s) => `/api/v1/sessions/${s}/recordings`), recordingBody(t));
}

/** Requests for the read API: event listing, session listing, one recording. */
export function readRequests(t: FuzzTarget): fc.Arbitrary<FuzzRequest> {
  const path = fc.oneof(
    fc.constant('/api/v1/events'),
    fc.constant('/api/v1/sessions'),
    sessionSegment.map((s) => `/api/v1/sessions/${s}/recording`),
  );
  return fc.record({ m: method('GET'), path, query: queryString, auth: credentials(t, 'read') }).map(({ m, path: p, query, auth }) =>
    m === 'GET' ? { method: m, path: p + query, headers: auth } : { method: m, path: p + query, headers: { ...auth, 'content-type': 'application/json' }, body: '[]' },
  );
}
