import type Database from 'better-sqlite3';
import type { WriteBatch, WriteResult } from '../event-store.js';
import type { AggregateBatch } from '../aggregates/aggregate-batch.js';
import type { SketchKit } from '../aggregates/visitor-sketch.js';

/** The text cleaners of `sanitize.ts` the writer applies, passed in rather than imported (see below). */
export interface Cleaners {
  cleanText(value: string): string;
  cleanJson(json: string): string;
}

/** What the group commit updates the report aggregates with (`sqlite-aggregates.ts`); null: a store without them. */
export interface CommitAggregates {
  /** The sketch functions its batches use. */
  kit: SketchKit;
  /** The groups of a new commit. */
  begin(): AggregateBatch;
  /**
   * Writes them, inside the commit's transaction; with `summaries` false (an erasure or retention
   * writing hour rows again) the session summaries are left for {@link recountSessions}.
   */
  apply(batch: AggregateBatch, summaries?: boolean): void;
  /**
   * Writes only its hour rows and session hour rows, without the summaries: an erasure or
   * retention writing hours again, which merges their day and week rows from the finer rows after.
   */
  applyHours(batch: AggregateBatch): void;
  /** Counts the named sessions' summaries again from their hour rows (`sqlite-session-summaries.ts`); returns the days sessions now start on that they did not. */
  recountSessions(projectId: string, sessions: Iterable<string>): number[];
}

/** Values of one event in {@link EncodedBatch.refs}: its text columns by index, and the bot flag. */
const REF_FIELDS = 21;
/** Values of one event in {@link EncodedBatch.times}. */
const TIME_FIELDS = 3;
/** Values of one event in {@link EncodedBatch.texts}: its id and its properties as JSON. */
const TEXT_FIELDS = 2;
/** Columns of one recording chunk in {@link EncodedBatch.chunks}, in insert order. */
const CHUNK_FIELDS = 10;

/**
 * A group commit as flat column values: what the request thread hands to the writer thread.
 * Primitives only, because a structured clone of event objects walks every property. Most text
 * columns repeat from event to event (project, type, agent, address, visitor, session, the report
 * columns): those are sent once per group in {@link EncodedBatch.strings} and referred to by index
 * from a typed array, and the times go in another, both transferred rather than cloned: the clone
 * then writes two strings per event instead of one value per column (docs/decisions.md, "Write
 * path: each event parsed and encoded once"; the figures are in bench/RESULTS.md).
 */
export interface EncodedBatch {
  /**
   * {@link REF_FIELDS} values per event: project, type, user, session, agent, address as an index
   * into `strings` (-1 for null), the bot flag (1 or 0), the visitor and the thirteen report
   * columns (`REPORT_COLUMNS` order: the eleven filter columns, the anonymous id, the country) as
   * indexes again.
   */
  refs: Int32Array;
  /** {@link TIME_FIELDS} values per event: time, client time (NaN for none), arrival time, ms. */
  times: Float64Array;
  /** {@link TEXT_FIELDS} values per event: the event id and the properties as JSON text. */
  texts: string[];
  /** The distinct values of the repeating columns, each once. */
  strings: string[];
  /** {@link CHUNK_FIELDS} values per chunk, the recorded events as JSON text. */
  chunks: Array<string | number | null>;
}

/** The buffers of an {@link EncodedBatch} to transfer rather than copy when it is posted to a thread. */
export function transferablesOf(batch: EncodedBatch): ArrayBuffer[] {
  return [batch.refs.buffer as ArrayBuffer, batch.times.buffer as ArrayBuffer];
}

/** Flattens a group commit for {@link prepareEventWriter}; JSON is serialized here, cleaned in the writer. */
export function encodeBatch(batch: WriteBatch): EncodedBatch {
  const { events, chunks } = batch;
  const strings: string[] = [];
  const seen = new Map<string, number>();
  const ref = (value: string | null): number => {
    if (value === null) return -1;
    let i = seen.get(value);
    if (i === undefined) {
      i = strings.length;
      strings.push(value);
      seen.set(value, i);
    }
    return i;
  };
  const refs = new Int32Array(events.length * REF_FIELDS);
  const times = new Float64Array(events.length * TIME_FIELDS);
  const texts = new Array<string>(events.length * TEXT_FIELDS);
  for (let i = 0, r = 0, t = 0, x = 0; i < events.length; i++) {
    const e = events[i];
    refs[r++] = ref(e.projectId);
    refs[r++] = ref(e.eventType);
    refs[r++] = ref(e.userId);
    refs[r++] = ref(e.sessionId);
    refs[r++] = ref(e.userAgent);
    refs[r++] = ref(e.ipAddress);
    refs[r++] = e.isBot ? 1 : 0;
    refs[r++] = ref(e.visitorId);
    const d = e.dimensions;
    if (d === undefined) {
      for (let k = 0; k < 13; k++) refs[r++] = -1;
    } else {
      refs[r++] = ref(d.path);
      refs[r++] = ref(d.host);
      refs[r++] = ref(d.referrerHost);
      refs[r++] = ref(d.channel);
      refs[r++] = ref(d.utmSource);
      refs[r++] = ref(d.utmMedium);
      refs[r++] = ref(d.utmCampaign);
      refs[r++] = ref(d.browser);
      refs[r++] = ref(d.os);
      refs[r++] = ref(d.device);
      refs[r++] = ref(d.screenClass);
      refs[r++] = ref(d.anonymousId);
      refs[r++] = ref(d.country);
    }
    times[t++] = e.timestamp;
    times[t++] = e.clientTimestamp ?? Number.NaN;
    times[t++] = e.receivedAt;
    texts[x++] = e.eventId;
    texts[x++] = JSON.stringify(e.properties);
  }
  const ch = new Array<string | number | null>(chunks.length * CHUNK_FIELDS);
  let j = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i];
    ch[j++] = c.projectId;
    ch[j++] = c.sessionId;
    ch[j++] = c.eventOffset;
    ch[j++] = c.eventsJson;
    ch[j++] = c.eventCount;
    ch[j++] = c.duration;
    ch[j++] = c.startUrl;
    ch[j++] = c.userId;
    ch[j++] = c.isFinal ? 1 : 0;
    ch[j++] = c.receivedAt;
  }
  return { refs, times, texts, strings, chunks: ch };
}

/**
 * Prepares the group-commit transaction of the SQLite store on `db`: every event and recording
 * chunk of an {@link EncodedBatch} in one transaction, `.changes` telling inserted (true) from
 * duplicate (false) in batch order, including a second copy of an id inside the same group.
 *
 * It runs in the writer thread (`sqlite-writer.ts`), which receives it as source text, and in the
 * calling thread for an in-memory database. It must therefore stay self-contained: no reference to
 * anything outside its own body and parameters (TypeScript types are fine; they are erased).
 * Times are rounded to whole milliseconds like `wholeMs` (PostgreSQL stores BIGINT).
 */
export function prepareEventWriter(
  db: Database.Database,
  clean: Cleaners,
  aggregates: CommitAggregates | null,
): (batch: EncodedBatch) => WriteResult {
  const insertEvent = db.prepare<unknown[]>(
    `INSERT INTO events (project_id, event_id, event_type, user_id, session_id, timestamp, client_timestamp,
       received_at, properties, user_agent, ip_address, is_bot, visitor_id, path, host, referrer_host, channel, utm_source,
       utm_medium, utm_campaign, browser, os, device, screen_class, anonymous_id, country)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, event_id) DO NOTHING`,
  );
  const insertChunk = db.prepare<unknown[]>(
    `INSERT INTO recording_chunks (project_id, session_id, event_offset, events, event_count, duration,
       start_url, user_id, is_final, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, session_id, event_offset) DO NOTHING`,
  );
  // The report rollups' marks (docs/decisions.md, "Daily rollups"): one per (project, UTC day) the
  // group stored events in, in the group's own transaction, instead of a row trigger's upsert per event.
  const markDay = db.prepare<unknown[]>(
    'INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1',
  );
  const { cleanText, cleanJson } = clean;
  const text = (v: string | number | null): string => cleanText(v as string);
  const textOrNull = (v: string | number | null): string | null => (v === null ? null : cleanText(v as string));
  const ms = (v: string | number | null): number => Math.round(v as number);
  // 21, 3, 2 and 10 below are REF_FIELDS, TIME_FIELDS, TEXT_FIELDS and CHUNK_FIELDS, 86,400,000 is
  // DAY_MS (rollup-schema.ts), written out because this function travels as source; `at` reads a
  // column sent as an index into `strings`.
  return db.transaction((batch: EncodedBatch): WriteResult => {
    // Each distinct value cleaned once, however many events repeat it.
    const strings = batch.strings.map((value) => cleanText(value));
    const at = (i: number): string | null => (i < 0 ? null : (strings[i] as string));
    const { refs, times, texts } = batch;
    const eventInserted = new Array<boolean>(texts.length / 2);
    // (project index, day) pairs of stored events; a group nearly always holds one or two.
    const days = new Map<number, Set<number>>();
    let lastProject = -1;
    let lastDay = Number.NaN;
    const groups = aggregates === null ? null : aggregates.begin();
    // The event's value of each aggregate dimension after '' (in order: `AGGREGATE_COLUMNS`, the
    // eleven columns from path to screen class, the country, the event type, an error's message),
    // reused.
    const dimValues = new Array<string | null>(14);
    for (let i = 0, r = 0, t = 0, x = 0; i < eventInserted.length; i++, r += 21, t += 3, x += 2) {
      const timestamp = Math.round(times[t] as number);
      const clientTime = times[t + 1] as number;
      const properties = cleanJson(texts[x + 1] as string);
      const stored =
        insertEvent.run(
          at(refs[r] as number),
          cleanText(texts[x] as string),
          at(refs[r + 1] as number),
          at(refs[r + 2] as number),
          at(refs[r + 3] as number),
          timestamp,
          Number.isNaN(clientTime) ? null : Math.round(clientTime),
          Math.round(times[t + 2] as number),
          properties,
          at(refs[r + 4] as number),
          at(refs[r + 5] as number),
          refs[r + 6],
          at(refs[r + 7] as number),
          at(refs[r + 8] as number),
          at(refs[r + 9] as number),
          at(refs[r + 10] as number),
          at(refs[r + 11] as number),
          at(refs[r + 12] as number),
          at(refs[r + 13] as number),
          at(refs[r + 14] as number),
          at(refs[r + 15] as number),
          at(refs[r + 16] as number),
          at(refs[r + 17] as number),
          at(refs[r + 18] as number),
          at(refs[r + 19] as number),
          at(refs[r + 20] as number),
        ).changes > 0;
      eventInserted[i] = stored;
      if (!stored) continue;
      if (groups !== null) {
        for (let k = 0; k < 11; k++) dimValues[k] = at(refs[r + 8 + k] as number);
        dimValues[11] = at(refs[r + 20] as number);
        const type = at(refs[r + 1] as number) as string;
        dimValues[12] = type;
        // As the errors report reads it from the stored JSON (`errorMessageOf` in aggregate-schema.ts).
        if (type === 'error') {
          const message = (JSON.parse(properties) as Record<string, unknown>).message;
          dimValues[13] = message === undefined || message === null ? '' : typeof message === 'string' ? message : JSON.stringify(message);
        } else dimValues[13] = null;
        groups.add(
          at(refs[r] as number) as string,
          type,
          at(refs[r + 3] as number),
          timestamp,
          refs[r + 6] === 1 ? 1 : 0,
          at(refs[r + 7] as number),
          at(refs[r + 19] as number),
          dimValues,
        );
      }
      const project = refs[r] as number;
      const day = Math.floor(timestamp / 86_400_000);
      if (project === lastProject && day === lastDay) continue;
      lastProject = project;
      lastDay = day;
      let projectDays = days.get(project);
      if (projectDays === undefined) days.set(project, (projectDays = new Set()));
      projectDays.add(day);
    }
    for (const [project, projectDays] of days) for (const day of projectDays) markDay.run(at(project), day);
    if (groups !== null) (aggregates as CommitAggregates).apply(groups);
    const ch = batch.chunks;
    const chunkInserted = new Array<boolean>(ch.length / 10);
    for (let i = 0, j = 0; j < ch.length; i++, j += 10) {
      chunkInserted[i] =
        insertChunk.run(
          text(ch[j]),
          text(ch[j + 1]),
          ch[j + 2],
          cleanJson(ch[j + 3] as string),
          ch[j + 4],
          ch[j + 5],
          textOrNull(ch[j + 6]),
          textOrNull(ch[j + 7]),
          ch[j + 8],
          ms(ch[j + 9]),
        ).changes > 0;
    }
    return { eventInserted, chunkInserted };
  });
}
