import type Database from 'better-sqlite3';
import type { WriteBatch, WriteResult } from './event-store.js';

/** The text cleaners of `sanitize.ts` the writer applies, passed in rather than imported (see below). */
export interface Cleaners {
  cleanText(value: string): string;
  cleanJson(json: string): string;
}

/** Columns of one event in {@link EncodedBatch.events}, in insert order. */
const EVENT_FIELDS = 25;
/** Columns of one recording chunk in {@link EncodedBatch.chunks}, in insert order. */
const CHUNK_FIELDS = 10;

/**
 * A group commit as flat column values: what the request thread hands to the writer thread.
 * Primitives only, because a structured clone of strings and numbers is a copy, while one of
 * event objects walks every property: measured, cloning the objects cost more per event than
 * serializing the properties here and cloning the flat values (the SQLite store's figures are in
 * bench/RESULTS.md). The clone still copies every string, and most columns repeat from event to
 * event (project, agent, address, visitor, session, the report columns): those are sent once per
 * group in {@link EncodedBatch.strings} and referred to by index.
 */
export interface EncodedBatch {
  /**
   * {@link EVENT_FIELDS} values per event: the event id, times, the properties as JSON text, and
   * for every other text column (project, type, user, session, agent, address, visitor and the
   * twelve report columns) an index into `strings`, or null.
   */
  events: Array<string | number | null>;
  /** The distinct values of the repeating columns of `events`, each once. */
  strings: string[];
  /** {@link CHUNK_FIELDS} values per chunk, the recorded events as JSON text. */
  chunks: Array<string | number | null>;
}

/** Flattens a group commit for {@link prepareEventWriter}; JSON is serialized here, cleaned in the writer. */
export function encodeBatch(batch: WriteBatch): EncodedBatch {
  const { events, chunks } = batch;
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
  const ev = new Array<string | number | null>(events.length * EVENT_FIELDS);
  let j = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
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
  const ch = new Array<string | number | null>(chunks.length * CHUNK_FIELDS);
  j = 0;
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
  return { events: ev, strings, chunks: ch };
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
export function prepareEventWriter(db: Database.Database, clean: Cleaners): (batch: EncodedBatch) => WriteResult {
  const insertEvent = db.prepare<unknown[]>(
    `INSERT INTO events (project_id, event_id, event_type, user_id, session_id, timestamp, client_timestamp,
       received_at, properties, user_agent, ip_address, is_bot, visitor_id, path, host, referrer_host, channel, utm_source,
       utm_medium, utm_campaign, browser, os, device, screen_class, anonymous_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
  // 25 and 10 below are EVENT_FIELDS and CHUNK_FIELDS, 86,400,000 is DAY_MS (rollup-schema.ts),
  // written out because this function travels as source; `at` reads a column sent as an index into `strings`.
  return db.transaction((batch: EncodedBatch): WriteResult => {
    // Each distinct value cleaned once, however many events repeat it.
    const strings = batch.strings.map((value) => cleanText(value));
    const at = (v: string | number | null): string | null => (v === null ? null : (strings[v as number] as string));
    const ev = batch.events;
    const eventInserted = new Array<boolean>(ev.length / 25);
    // (project index, day) pairs of stored events; a group nearly always holds one or two.
    const days = new Map<number, Set<number>>();
    let lastProject = -1;
    let lastDay = Number.NaN;
    for (let i = 0, j = 0; j < ev.length; i++, j += 25) {
      const timestamp = ms(ev[j + 5]);
      const stored =
        insertEvent.run(
          at(ev[j]),
          text(ev[j + 1]),
          at(ev[j + 2]),
          at(ev[j + 3]),
          at(ev[j + 4]),
          timestamp,
          ev[j + 6] === null ? null : ms(ev[j + 6]),
          ms(ev[j + 7]),
          cleanJson(ev[j + 8] as string),
          at(ev[j + 9]),
          at(ev[j + 10]),
          ev[j + 11],
          at(ev[j + 12]),
          at(ev[j + 13]),
          at(ev[j + 14]),
          at(ev[j + 15]),
          at(ev[j + 16]),
          at(ev[j + 17]),
          at(ev[j + 18]),
          at(ev[j + 19]),
          at(ev[j + 20]),
          at(ev[j + 21]),
          at(ev[j + 22]),
          at(ev[j + 23]),
          at(ev[j + 24]),
        ).changes > 0;
      eventInserted[i] = stored;
      if (!stored) continue;
      const project = ev[j] as number;
      const day = Math.floor(timestamp / 86_400_000);
      if (project === lastProject && day === lastDay) continue;
      lastProject = project;
      lastDay = day;
      let projectDays = days.get(project);
      if (projectDays === undefined) days.set(project, (projectDays = new Set()));
      projectDays.add(day);
    }
    for (const [project, projectDays] of days) for (const day of projectDays) markDay.run(at(project), day);
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
