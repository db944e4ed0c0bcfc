import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { EventDimensions, StoredEvent, StoredRecordingChunk } from '../event-store.js';
import { idDay } from './postgres-partition.js';
import { cleanJson, cleanNullableText, cleanText, wholeMs, wholeMsOrNull } from '../shared/sanitize.js';
import { type BufferPool, Utf8Buffer, createBufferPool } from '../shared/utf8-buffer.js';

/*
 * The write half of the PostgreSQL store. Events go in as one `INSERT … SELECT FROM
 * jsonb_to_recordset($1)` per slice: the whole slice is a single JSON parameter, so the statement
 * text is constant (prepared once per connection), the 65,535-parameter limit of a multi-row VALUES
 * never applies, and the client's work is one native JSON.stringify. Measured side by side, it was
 * faster than `unnest` of eleven array parameters (whose element escaping in `pg` cost the client
 * more) and than multi-row VALUES. `jsonb_to_recordset` rather than `json_to_recordset`: the
 * document is parsed once and each `properties` object is taken over as jsonb, where the json
 * variant parses it a second time, which costs PostgreSQL CPU on every event. (The store's current
 * figures are in bench/RESULTS.md.)
 */

/*
 * The usual group commit goes in by COPY instead (`copyEvents`): PostgreSQL then reads each value
 * with its type's input function from tab-separated text, with no JSON document to parse around the
 * rows, which cost it a clear share of its CPU per event (bench/RESULTS.md, "Server ingest"). COPY
 * has no ON CONFLICT, but it is one atomic statement: a group with an event already stored fails
 * whole with a unique violation, stores nothing, and goes in again by the INSERT above, which tells
 * each event's fate. Duplicates are rare (a client's retry after a lost answer, a beacon beside a
 * worker's send), so nearly every group is one COPY.
 */

/** Rows per INSERT statement; bounds the size of one JSON parameter. */
const EVENT_SLICE = 5000;

/** A pool (each statement on its own) or a client inside a transaction. */
export interface Queryable {
  query<R extends QueryResultRow>(config: QueryConfig): Promise<QueryResult<R>>;
}

/**
 * `$2` is the number of rows sent. The answer is one row: how many were inserted and, only when
 * that is fewer than sent (some were duplicates), which ones. Returning every inserted key instead
 * costs a DataRow per event to send and parse, for the common case where all were inserted.
 */
const INSERT_EVENTS = {
  name: 'service_analytics_insert_events',
  text: `
WITH inserted AS (
  INSERT INTO events (project_id, event_id, event_type, user_id, session_id, timestamp, client_timestamp,
                      received_at, properties, user_agent, ip_address, is_bot, visitor_id, path, host, referrer_host,
                      channel, utm_source, utm_medium, utm_campaign, browser, os, device, screen_class, anonymous_id, country, id_day)
  SELECT p, e, t, u, s, ts, cts, ra, props, ua, ip, COALESCE(b, false), v, pa, h, rh, ch, us, um, uc, br, os, dv, sc, a, co, d
  FROM jsonb_to_recordset($1::jsonb) AS x (p text, e text, t text, u text, s text, ts int8, cts int8, ra int8,
                                         props jsonb, ua text, ip text, b boolean, v text, pa text, h text, rh text,
                                         ch text, us text, um text, uc text, br text, os text, dv text, sc text, a text, co text, d int4)
  ON CONFLICT (project_id, event_id, id_day) DO NOTHING
  RETURNING project_id, event_id
), counted AS (
  SELECT count(*)::int AS n FROM inserted
)
SELECT n, CASE WHEN n < $2::int THEN (SELECT COALESCE(json_agg(json_build_array(project_id, event_id)), '[]') FROM inserted) END AS keys
FROM counted`,
};

const INSERT_CHUNK = {
  name: 'service_analytics_insert_chunk',
  text: `
INSERT INTO recording_chunks (project_id, session_id, event_offset, events, event_count, duration,
                              start_url, user_id, is_final, received_at, id_day)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (project_id, session_id, event_offset, id_day) DO NOTHING`,
};

/** The report columns of an event as members of its insert row, null ones left out (shorter to send). */
function reportMembers(d: EventDimensions): Record<string, string> {
  const row: Record<string, string> = {};
  if (d.path !== null) row.pa = d.path;
  if (d.host !== null) row.h = d.host;
  if (d.referrerHost !== null) row.rh = d.referrerHost;
  if (d.channel !== null) row.ch = d.channel;
  if (d.utmSource !== null) row.us = d.utmSource;
  if (d.utmMedium !== null) row.um = d.utmMedium;
  if (d.utmCampaign !== null) row.uc = d.utmCampaign;
  if (d.browser !== null) row.br = d.browser;
  if (d.os !== null) row.os = d.os;
  if (d.device !== null) row.dv = d.device;
  if (d.screenClass !== null) row.sc = d.screenClass;
  if (d.anonymousId !== null) row.a = d.anonymousId;
  if (d.country !== null) row.co = d.country;
  return row;
}

/** Byte-wise order on keys, the same in every process: all writers take row locks in one order. */
function byKey(keys: readonly string[]): (a: number, b: number) => number {
  return (a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0);
}

/**
 * Inserts events (on the pool when {@link isOneStatement}, else inside the caller's transaction)
 * and tells, per event in batch order, whether it was stored now. A repeated key inside the batch is sent once (its later copies are duplicates by
 * definition). Rows go in sorted by key: two processes writing overlapping batches then wait on
 * each other's uncommitted rows in the same order and cannot deadlock, and the one that waits
 * sees the other's commit and skips the row, so each event is reported inserted exactly once.
 */
export async function insertEvents(client: Queryable, events: readonly StoredEvent[]): Promise<boolean[]> {
  const inserted = new Array<boolean>(events.length).fill(false);
  if (events.length === 0) return inserted;
  const keys = new Array<string>(events.length);
  const firstByKey = new Map<string, number>();
  const order: number[] = [];
  for (let i = 0; i < events.length; i++) {
    // The ids as PostgreSQL will store and return them; NUL cannot occur in a cleaned id, so it
    // separates the two parts unambiguously.
    const key = `${cleanText(events[i].projectId)}\0${cleanText(events[i].eventId)}`;
    keys[i] = key;
    if (!firstByKey.has(key)) {
      firstByKey.set(key, i);
      order.push(i);
    }
  }
  order.sort(byKey(keys));

  for (let start = 0; start < order.length; start += EVENT_SLICE) {
    const slice = order.slice(start, start + EVENT_SLICE);
    const rows = slice.map((i) => {
      const e = events[i];
      // Text fields are cleaned by cleanJson below, on the whole document at once.
      return {
        p: e.projectId,
        e: e.eventId,
        t: e.eventType,
        u: e.userId,
        s: e.sessionId,
        ts: wholeMs(e.timestamp),
        cts: wholeMsOrNull(e.clientTimestamp),
        ra: wholeMs(e.receivedAt),
        props: e.properties,
        ua: e.userAgent,
        ip: e.ipAddress,
        // Omitted when false, the usual case: a shorter document to send and parse.
        ...(e.isBot ? { b: true } : {}),
        v: e.visitorId,
        // Report columns; a missing member reads as null.
        ...(e.dimensions === undefined ? {} : reportMembers(e.dimensions)),
        // The partition day (`postgres-partition.ts`), of the id as stored.
        d: idDay(cleanText(e.eventId)),
      };
    });
    const values = [cleanJson(JSON.stringify(rows)), slice.length];
    const result = await client.query<{ n: number; keys: Array<[string, string]> | null }>({ ...INSERT_EVENTS, values });
    const answer = result.rows[0];
    if (!answer) throw new Error('PostgreSQL did not answer the event insert.');
    if (answer.keys === null) {
      if (answer.n !== slice.length) throw new Error(`PostgreSQL inserted ${answer.n} of ${slice.length} events but named none.`);
      for (const i of slice) inserted[i] = true;
      continue;
    }
    for (const [projectId, eventId] of answer.keys) {
      const index = firstByKey.get(`${projectId}\0${eventId}`);
      if (index === undefined) throw new Error(`PostgreSQL returned an event that was not sent: ${eventId}`);
      inserted[index] = true;
    }
  }
  return inserted;
}

/**
 * Inserts recording chunks inside the caller's transaction, one statement each (chunks are few and
 * can be megabytes, so batching them buys little), in key order for the same reason as events.
 */
export async function insertChunks(client: PoolClient, chunks: readonly StoredRecordingChunk[]): Promise<boolean[]> {
  const inserted = new Array<boolean>(chunks.length).fill(false);
  const keys = chunks.map((c) => `${cleanText(c.projectId)}\0${cleanText(c.sessionId)}\0${String(c.eventOffset).padStart(20, '0')}`);
  const order = chunks.map((_, i) => i).sort(byKey(keys));
  for (const i of order) {
    const c = chunks[i];
    const sessionId = cleanText(c.sessionId);
    const result = await client.query({
      ...INSERT_CHUNK,
      values: [
        cleanText(c.projectId),
        sessionId,
        c.eventOffset,
        cleanJson(c.eventsJson),
        c.eventCount,
        c.duration,
        cleanNullableText(c.startUrl),
        cleanNullableText(c.userId),
        c.isFinal,
        wholeMs(c.receivedAt),
        // The partition day (`postgres-partition.ts`), of the session id as stored.
        idDay(sessionId),
      ],
    });
    inserted[i] = result.rowCount === 1;
  }
  return inserted;
}

/** SQLSTATE of a unique violation: a COPY met an event already stored. */
const UNIQUE_VIOLATION = '23505';

/** Columns of a COPY row, in the order {@link copyRow} writes them. */
const COPY_EVENTS = `COPY events (project_id, event_id, event_type, user_id, session_id, timestamp, client_timestamp,
  received_at, properties, user_agent, ip_address, is_bot, visitor_id, path, host, referrer_host, channel, utm_source,
  utm_medium, utm_campaign, browser, os, device, screen_class, anonymous_id, country, id_day) FROM STDIN`;

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A text value in COPY's text format: cleaned, then backslash, tab and line breaks escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  const clean = cleanText(value);
  COPY_SPECIAL.lastIndex = 0;
  return COPY_SPECIAL.test(clean) ? clean.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] as string) : clean;
}

/** JSON text in COPY's text format: JSON.stringify writes no raw tab or line break, only backslashes. */
function copyJson(json: string): string {
  const clean = cleanJson(json);
  return clean.indexOf('\\') === -1 ? clean : clean.replaceAll('\\', '\\\\');
}

/** One event as a line of COPY text: 27 tab-separated values, `\N` for null; `eventId` is the cleaned id. */
function copyRow(e: StoredEvent, eventId: string): string {
  const d = e.dimensions;
  const report =
    d === undefined
      ? '\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N'
      : `${copyText(d.path)}\t${copyText(d.host)}\t${copyText(d.referrerHost)}\t${copyText(d.channel)}\t${copyText(d.utmSource)}\t${copyText(
          d.utmMedium,
        )}\t${copyText(d.utmCampaign)}\t${copyText(d.browser)}\t${copyText(d.os)}\t${copyText(d.device)}\t${copyText(d.screenClass)}\t${copyText(
          d.anonymousId,
        )}\t${copyText(d.country)}`;
  const clientTimestamp = e.clientTimestamp === null ? '\\N' : String(wholeMs(e.clientTimestamp));
  return `${copyText(e.projectId)}\t${copyText(eventId)}\t${copyText(e.eventType)}\t${copyText(e.userId)}\t${copyText(e.sessionId)}\t${wholeMs(
    e.timestamp,
  )}\t${clientTimestamp}\t${wholeMs(e.receivedAt)}\t${copyJson(JSON.stringify(e.properties))}\t${copyText(e.userAgent)}\t${copyText(
    e.ipAddress,
  )}\t${e.isBot ? 't' : 'f'}\t${copyText(e.visitorId)}\t${report}\t${idDay(eventId)}\n`;
}

/**
 * Writes `events` with one COPY on `client`, committed by itself, and resolves with true per event;
 * or with null, having stored nothing, when one of them was already stored (the caller then uses
 * {@link insertEvents}). A key repeated inside the batch is sent once, its later copies reported as
 * duplicates; rows go in sorted by key, as in {@link insertEvents}, so that two processes copying
 * overlapping groups wait on each other in one order instead of deadlocking.
 */
export async function copyEvents(client: PoolClient, events: readonly StoredEvent[], buffers: BufferPool = createBufferPool()): Promise<boolean[] | null> {
  const inserted = new Array<boolean>(events.length).fill(false);
  if (events.length === 0) return inserted;
  const keys = new Array<string>(events.length);
  const ids = new Array<string>(events.length);
  const seen = new Set<string>();
  const order: number[] = [];
  for (let i = 0; i < events.length; i++) {
    ids[i] = cleanText(events[i].eventId);
    const key = `${cleanText(events[i].projectId)}\0${ids[i]}`;
    keys[i] = key;
    if (!seen.has(key)) {
      seen.add(key);
      order.push(i);
    }
  }
  order.sort(byKey(keys));
  // Row by row into a reused buffer (`utf8-buffer.ts`), not into one long string and then a new buffer.
  const out = new Utf8Buffer(buffers.take());
  for (const i of order) out.append(copyRow(events[i] as StoredEvent, ids[i] as string));
  const stream = client.query(copyFrom(COPY_EVENTS));
  try {
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      // 'finish' comes after PostgreSQL's answer to the whole COPY, when the socket has sent every byte.
      stream.on('finish', resolve);
      stream.end(out.written());
    });
  } catch (error) {
    // Not given back: PostgreSQL may refuse a COPY before the socket has sent all of it.
    if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) return null;
    throw error;
  }
  buffers.give(out.arrayBuffer);
  if (stream.rowCount !== order.length) throw new Error(`PostgreSQL copied ${stream.rowCount} of ${order.length} events.`);
  for (const i of order) inserted[i] = true;
  return inserted;
}

/** Group commits that use INSERT after a COPY met a duplicate, before COPY is tried again. */
const INSERT_AFTER_DUPLICATE = 16;

/** The event half of a group commit, inside its transaction. */
export interface EventWriter {
  /**
   * Stores `events` in the transaction of `client`; true per event stored now, false for a
   * duplicate. `byInsert`: no COPY (the transaction's second run after {@link CopyMetDuplicate}).
   */
  write(client: PoolClient, events: readonly StoredEvent[], byInsert?: boolean): Promise<boolean[]>;
}

/**
 * Thrown by {@link EventWriter.write} when its COPY met an event already stored: PostgreSQL has
 * aborted the transaction, which the caller runs again from the start; the writer then inserts.
 */
export class CopyMetDuplicate extends Error {
  constructor() {
    super('A COPY of events met one already stored; run the transaction again.');
    this.name = 'CopyMetDuplicate';
  }
}

/**
 * Writes groups by COPY, and by INSERT … ON CONFLICT when COPY met a duplicate: that group, whose
 * transaction the failed COPY aborted, again from the start (a savepoint before every COPY would
 * cost every commit a round trip for the rare duplicate), and the next few groups too, as
 * duplicates come in runs (a client resending a backlog), where every COPY would fail and be done
 * twice.
 */
export function createEventWriter(): EventWriter {
  let insertsLeft = 0;
  const buffers = createBufferPool();
  return {
    async write(client, events, byInsert = false) {
      if (byInsert) return insertEvents(client, events);
      if (insertsLeft > 0) {
        insertsLeft--;
        return insertEvents(client, events);
      }
      const copied = await copyEvents(client, events, buffers);
      if (copied !== null) return copied;
      insertsLeft = INSERT_AFTER_DUPLICATE;
      throw new CopyMetDuplicate();
    },
  };
}
