// What handing a group commit on costs (docs/decisions.md, "Write path: each event parsed and
// encoded once"): first, CPU per event on the sending and the receiving thread for four ways of
// sending a group to the SQLite writer thread (what the store does, and three it tried); second, CPU
// per event for two ways of building the PostgreSQL store's COPY body. Run with
//
//   node scripts/run-ts.mjs bench/hand-off-cost.ts [groups]
//
// Each group is 250 of the ingest benchmark's own events (bench/load.ts) as the batch route stores
// them. The receiving thread answers every group, as the writer does, so each row is a round trip.
import { Worker } from 'node:worker_threads';
import type { BackendEvent } from '../protocol/index.js';
import { createDimensionExtractor } from '../server/reports/dimensions.js';
import type { StoredEvent } from '../server/store/event-store.js';
import { cleanJson, cleanText, wholeMs } from '../server/store/shared/sanitize.js';
import { encodeBatch, transferablesOf } from '../server/store/sqlite/sqlite-event-writer.js';
import { Utf8Buffer, createBufferPool } from '../server/store/shared/utf8-buffer.js';
import { sampleBodies } from './load.js';

const GROUP = 250;

const groups = Number(process.argv[2] ?? 400);

const templates = sampleBodies(20, 50).flatMap((body) => JSON.parse(body) as BackendEvent[]);
const dimensions = createDimensionExtractor();
let seq = 0;
const group = (): StoredEvent[] =>
  Array.from({ length: GROUP }, () => {
    const e = templates[seq % templates.length] as BackendEvent;
    return {
      projectId: 'proj_bench',
      eventId: `0190a1b2-c3d4-7000-8000-${(seq++).toString(16).padStart(12, '0')}`,
      eventType: e.event_type,
      userId: e.user_id ?? null,
      sessionId: e.session_id ?? null,
      timestamp: 1_795_000_000_000 + seq,
      clientTimestamp: null,
      receivedAt: 1_795_000_000_000 + seq,
      properties: e.properties ?? {},
      userAgent: e.user_agent ?? null,
      ipAddress: '127.0.0.0',
      isBot: false,
      visitorId: 'q3n1VnZ0mJ1kCk2a9XbV0w',
      // The report columns, as the batch route extracts them.
      dimensions: dimensions.extract(e.properties ?? {}, e.user_agent ?? null),
    };
  });

// The alternative measured against it: each event's values as text, cleaned, NUL after each.
/** Positions in an event's values (and bits of its null mask) of the nullable columns. */
const NULLABLE = {
  userId: 4,
  sessionId: 5,
  clientTimestamp: 7,
  userAgent: 10,
  ipAddress: 11,
  visitorId: 13,
  report: 14,
} as const;

/** Report columns in insert order (`sqlite-schema.ts`, REPORT_COLUMNS). */
const REPORT_KEYS = [
  'path',
  'host',
  'referrerHost',
  'channel',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'browser',
  'os',
  'device',
  'screenClass',
  'anonymousId',
] as const;

/** A nullable text value: cleaned, or empty for null (the mask tells). */
function part(value: string | null): string {
  return value === null ? '' : cleanText(value);
}

/** One event's values as text, each followed by NUL: a mask of its null values, then its 25 columns. */
function eventText(e: StoredEvent): string {
  let mask =
    (e.userId === null ? 1 << NULLABLE.userId : 0) |
    (e.sessionId === null ? 1 << NULLABLE.sessionId : 0) |
    (e.clientTimestamp === null ? 1 << NULLABLE.clientTimestamp : 0) |
    (e.userAgent === null ? 1 << NULLABLE.userAgent : 0) |
    (e.ipAddress === null ? 1 << NULLABLE.ipAddress : 0) |
    (e.visitorId === null ? 1 << NULLABLE.visitorId : 0);
  let report = '';
  const d = e.dimensions;
  for (let k = 0; k < REPORT_KEYS.length; k++) {
    const value = d === undefined ? null : d[REPORT_KEYS[k] as (typeof REPORT_KEYS)[number]];
    if (value === null) mask |= 1 << (NULLABLE.report + k);
    report += `${part(value)}\0`;
  }
  const clientTimestamp = e.clientTimestamp === null ? '' : wholeMs(e.clientTimestamp);
  return `${mask}\0${cleanText(e.projectId)}\0${cleanText(e.eventId)}\0${cleanText(e.eventType)}\0${part(e.userId)}\0${part(
    e.sessionId,
  )}\0${wholeMs(e.timestamp)}\0${clientTimestamp}\0${wholeMs(e.receivedAt)}\0${cleanJson(JSON.stringify(e.properties))}\0${part(
    e.userAgent,
  )}\0${part(e.ipAddress)}\0${e.isBot ? 1 : 0}\0${part(e.visitorId)}\0${report}`;
}


/** The store's hand-off before typed arrays (as it was): 25 values per event, repeated text by index into `strings`. */
function valuesPerColumn(events: readonly StoredEvent[]): { values: Array<string | number | null>; strings: string[] } {
  const strings: string[] = [];
  const seen = new Map<string, number>();
  const ref = (value: string | null): number | null => {
    if (value === null) return null;
    let i = seen.get(value);
    if (i === undefined) {
      i = strings.length;
      strings.push(value);
      seen.set(value, i);
    }
    return i;
  };
  const ev = new Array<string | number | null>(events.length * 25);
  let j = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as StoredEvent;
    ev[j++] = ref(e.projectId);
    ev[j++] = e.eventId;
    ev[j++] = ref(e.eventType);
    ev[j++] = ref(e.userId);
    ev[j++] = ref(e.sessionId);
    ev[j++] = e.timestamp;
    ev[j++] = e.clientTimestamp;
    ev[j++] = e.receivedAt;
    ev[j++] = JSON.stringify(e.properties);
    ev[j++] = ref(e.userAgent);
    ev[j++] = ref(e.ipAddress);
    ev[j++] = e.isBot ? 1 : 0;
    ev[j++] = ref(e.visitorId);
    const d = e.dimensions;
    if (d === undefined) {
      for (let k = 0; k < 12; k++) ev[j++] = null;
    } else {
      ev[j++] = ref(d.path);
      ev[j++] = ref(d.host);
      ev[j++] = ref(d.referrerHost);
      ev[j++] = ref(d.channel);
      ev[j++] = ref(d.utmSource);
      ev[j++] = ref(d.utmMedium);
      ev[j++] = ref(d.utmCampaign);
      ev[j++] = ref(d.browser);
      ev[j++] = ref(d.os);
      ev[j++] = ref(d.device);
      ev[j++] = ref(d.screenClass);
      ev[j++] = ref(d.anonymousId);
    }
  }
  return { values: ev, strings };
}

/** The receiver: reads what it got (as the writer would) and answers; reports its own CPU per group. */
const RECEIVER = `
const { parentPort } = require('node:worker_threads');
const clean = ${cleanText.toString()};
const cleanJson = ${cleanJson.toString()};
let cpu = process.cpuUsage(); let n = 0;
parentPort.on('message', (m) => {
  if (m.report) { const c = process.cpuUsage(cpu); parentPort.postMessage({ cpu: (c.user + c.system) / n }); cpu = process.cpuUsage(); n = 0; return; }
  n++;
  let count = 0;
  if (m.bytes) {
    const b = Buffer.from(m.bytes);
    for (let i = 0; i < m.ends.length; i++) {
      const f = b.toString('utf8', i ? m.ends[i - 1] : 0, m.ends[i]).split('\\0');
      count += Number(f[0]) + Number(f[6]) + Number(f[8]) + f.length;
    }
  } else if (typeof m.text === 'string') count = m.text.split('\\0').length;
  else if (m.refs) {
    const strings = m.strings.map(clean);
    for (let i = 0; i < m.texts.length / 2; i++) {
      count += strings[m.refs[i * 20]].length + clean(m.texts[i * 2]).length + cleanJson(m.texts[i * 2 + 1]).length + m.times[i * 3];
    }
  } else {
    // The old writer: each distinct string cleaned once, the id and properties per event.
    const strings = m.strings.map(clean);
    for (let j = 0; j < m.values.length; j += 25) {
      count += strings[m.values[j]].length + clean(m.values[j + 1]).length + cleanJson(m.values[j + 8]).length + m.values[j + 5];
    }
  }
  const answer = { id: m.id, inserted: new Array(m.events).fill(count > 0) };
  if (m.bytes) parentPort.postMessage({ ...answer, bytes: m.bytes }, [m.bytes]); else parentPort.postMessage(answer);
});`;

type Way =
  | 'typed arrays of indexes and times, transferred; id and properties cloned (the store)'
  | 'column values, repeated text by index (before)'
  | 'one string'
  | 'transferred, reused buffer';

async function measure(way: Way): Promise<{ send: number; receive: number }> {
  const worker = new Worker(RECEIVER, { eval: true });
  const pool = createBufferPool();
  const prepared = Array.from({ length: groups }, group);
  let sendCpu = 0;
  for (let id = 0; id < prepared.length; id++) {
    const events = prepared[id] as StoredEvent[];
    const answered = new Promise<{ bytes?: ArrayBuffer }>((resolve) => worker.once('message', resolve));
    const t0 = process.cpuUsage();
    if (way === 'transferred, reused buffer') {
      const out = new Utf8Buffer(pool.take());
      const ends = events.map((e) => out.append(eventText(e)));
      worker.postMessage({ id, events: GROUP, bytes: out.arrayBuffer, ends }, [out.arrayBuffer]);
    } else if (way === 'one string') {
      let text = '';
      for (const e of events) text += eventText(e);
      worker.postMessage({ id, events: GROUP, text });
    } else if (way === 'column values, repeated text by index (before)') {
      const { values, strings } = valuesPerColumn(events);
      worker.postMessage({ id, events: GROUP, values, strings });
    } else {
      // The store's own hand-off.
      const batch = encodeBatch({ events, chunks: [] });
      worker.postMessage({ id, events: GROUP, ...batch }, transferablesOf(batch));
    }
    const t1 = process.cpuUsage(t0);
    sendCpu += t1.user + t1.system;
    const answer = await answered;
    if (answer.bytes) pool.give(answer.bytes);
  }
  const report = new Promise<{ cpu: number }>((resolve) => worker.once('message', resolve));
  worker.postMessage({ report: true });
  const { cpu } = await report;
  await worker.terminate();
  return { send: sendCpu / groups, receive: cpu };
}

const ways: Way[] = [
  'typed arrays of indexes and times, transferred; id and properties cloned (the store)',
  'column values, repeated text by index (before)',
  'one string',
  'transferred, reused buffer',
];
console.log(`| hand-off of a group of ${GROUP} events | sending thread, µs per event | receiving thread, µs per event |`);
console.log('|---|---:|---:|');
for (const way of ways) {
  await measure(way); // warm-up
  const { send, receive } = await measure(way);
  console.log(`| ${way} | ${(send / GROUP).toFixed(2)} | ${(receive / GROUP).toFixed(2)} |`);
}

// The PostgreSQL store's COPY body (server/store/postgres/postgres-write.ts): the group's rows as one long
// string and then a new Buffer (before), or row by row into a reused buffer (now). No thread here:
// the body goes to the socket.
const copyGroups = Array.from({ length: groups }, group);
const pool = createBufferPool();
let sink = 0;
const copyWays: Array<[string, (events: StoredEvent[]) => void]> = [
  [
    'one string, then a new Buffer',
    (events) => {
      let text = '';
      for (const e of events) text += eventText(e);
      sink += Buffer.from(text, 'utf8').length;
    },
  ],
  [
    'row by row into a reused buffer',
    (events) => {
      const out = new Utf8Buffer(pool.take());
      for (const e of events) out.append(eventText(e));
      sink += out.written().length;
      pool.give(out.arrayBuffer);
    },
  ],
];
console.log(`\n| COPY body of a group of ${GROUP} events | µs per event (row text included) |`);
console.log('|---|---:|');
for (const [name, build] of copyWays) {
  for (const events of copyGroups.slice(0, 50)) build(events); // warm-up
  const t0 = process.cpuUsage();
  for (const events of copyGroups) build(events);
  const t1 = process.cpuUsage(t0);
  console.log(`| ${name} | ${((t1.user + t1.system) / groups / GROUP).toFixed(2)} |`);
}
if (sink === 0) console.log('nothing written');
