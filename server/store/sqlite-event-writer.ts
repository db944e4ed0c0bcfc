import type Database from 'better-sqlite3';
import type { WriteResult } from './event-store.js';
import type { EncodedBatch } from './sqlite-batch-encoding.js';

/**
 * Prepares the group-commit transaction of the SQLite store on `db`: every event and recording
 * chunk of an {@link EncodedBatch} in one transaction, `.changes` telling inserted (true) from
 * duplicate (false) in batch order, including a second copy of an id inside the same group.
 *
 * It runs in the writer thread (`sqlite-writer.ts`), which receives it as source text, and in the
 * calling thread for an in-memory database. It must therefore stay self-contained: no reference to
 * anything outside its own body and parameters (TypeScript types are fine; they are erased).
 * Everything it binds was cleaned and rounded by the request thread's encoder (`sqlite-batch-encoding.ts`).
 */
export function prepareEventWriter(db: Database.Database): (batch: EncodedBatch) => WriteResult {
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
  // 86,400,000 is DAY_MS (rollup-schema.ts), written out because this function travels as source;
  // the layout read here is EncodedBatch's (sqlite-batch-encoding.ts).
  return db.transaction((batch: EncodedBatch): WriteResult => {
    const bytes = Buffer.from(batch.bytes);
    const { ends } = batch;
    const eventInserted = new Array<boolean>(ends.length);
    // (project, day) pairs of stored events, as `project\0day`; a group nearly always holds one or two.
    const days = new Set<string>();
    let lastDay = '';
    for (let i = 0; i < ends.length; i++) {
      const f = bytes.toString('utf8', i === 0 ? 0 : ends[i - 1], ends[i]).split('\0');
      const mask = Number(f[0]);
      // Value k: null when bit k of the mask is set.
      const col = (k: number): string | null => ((mask >> k) & 1 ? null : (f[k] as string));
      const project = f[1] as string;
      const timestamp = Number(f[6]);
      const stored =
        insertEvent.run(
          project,
          f[2],
          f[3],
          col(4),
          col(5),
          timestamp,
          (mask >> 7) & 1 ? null : Number(f[7]),
          Number(f[8]),
          f[9],
          col(10),
          col(11),
          f[12] === '1' ? 1 : 0,
          col(13),
          col(14),
          col(15),
          col(16),
          col(17),
          col(18),
          col(19),
          col(20),
          col(21),
          col(22),
          col(23),
          col(24),
          col(25),
        ).changes > 0;
      eventInserted[i] = stored;
      if (!stored) continue;
      const day = `${project}\0${Math.floor(timestamp / 86_400_000)}`;
      if (day === lastDay) continue;
      lastDay = day;
      days.add(day);
    }
    for (const day of days) {
      const cut = day.lastIndexOf('\0');
      markDay.run(day.slice(0, cut), Number(day.slice(cut + 1)));
    }
    const ch = batch.chunks;
    const chunkInserted = new Array<boolean>(ch.length / 10);
    for (let i = 0, j = 0; j < ch.length; i++, j += 10) {
      chunkInserted[i] = insertChunk.run(ch[j], ch[j + 1], ch[j + 2], ch[j + 3], ch[j + 4], ch[j + 5], ch[j + 6], ch[j + 7], ch[j + 8], ch[j + 9]).changes > 0;
    }
    return { eventInserted, chunkInserted };
  });
}
