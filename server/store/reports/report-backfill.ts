import type Database from 'better-sqlite3';
import type pg from 'pg';
import type { PropertyValue } from '../../../protocol/index.js';
import { createDimensionExtractor } from '../../reports/dimensions.js';
import type { EventDimensions } from '../event-store.js';
import { cleanJson, cleanNullableText } from '../shared/sanitize.js';
import { REPORT_BACKFILL, REPORT_COLUMNS } from './report-columns.js';

/*
 * Schema version 5 adds the report columns (`sqlite-schema.ts`, `postgres-schema.ts`). Events
 * stored before it get theirs here, from their stored properties and user agent with the same
 * extractor as ingest (all but `country`, which only the full client address gives, at ingest), and `client_timestamp` where it was null (the stored time was then the
 * client's own, or the arrival time for an event that came without one). The work goes in bounded
 * batches, one transaction each, keyset-ordered, with the position kept in `backfills`: memory
 * stays bounded, no lock is held for long, and a process stopped midway resumes where it stopped.
 * The figures per million rows are in docs/decisions.md, "Report columns".
 */

/** Rows per transaction. */
export const BACKFILL_BATCH = 5000;

/** The report columns of an event as values in `REPORT_COLUMNS` order (`report-columns.ts`). */
export function dimensionValues(d: EventDimensions | undefined): Array<string | null> {
  if (d === undefined) return REPORT_COLUMNS.map(() => null);
  return [...backfilledValues(d), d.country];
}

/**
 * What the backfill writes: the columns of `REPORT_COLUMNS_V5`, in order, which an event's stored
 * properties and user agent give. Not `country`: it comes from the client's full address, which
 * a stored event no longer has (truncated by default), so an older event keeps it null.
 */
function backfilledValues(d: EventDimensions): Array<string | null> {
  return [d.path, d.host, d.referrerHost, d.channel, d.utmSource, d.utmMedium, d.utmCampaign, d.browser, d.os, d.device, d.screenClass, d.anonymousId];
}

const parseProperties = (json: unknown): Record<string, PropertyValue> => {
  if (typeof json !== 'string') return (json ?? {}) as Record<string, PropertyValue>;
  try {
    return JSON.parse(json) as Record<string, PropertyValue>;
  } catch {
    return {};
  }
};

/** Fills the report columns of a SQLite database's older rows, if a backfill is pending. */
export function backfillSqliteReportColumns(db: Database.Database, batch = BACKFILL_BATCH): void {
  const pending = db.prepare('SELECT position FROM backfills WHERE name = ?');
  if (pending.get(REPORT_BACKFILL) === undefined) return;
  const extractor = createDimensionExtractor();
  const select = db.prepare<unknown[]>('SELECT rowid, properties, user_agent FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?');
  const update = db.prepare<unknown[]>(
    `UPDATE events SET path = ?, host = ?, referrer_host = ?, channel = ?, utm_source = ?, utm_medium = ?, utm_campaign = ?,
       browser = ?, os = ?, device = ?, screen_class = ?, anonymous_id = ?, client_timestamp = COALESCE(client_timestamp, timestamp)
     WHERE rowid = ?`,
  );
  const advance = db.prepare<unknown[]>('UPDATE backfills SET position = ? WHERE name = ?');
  const finish = db.prepare<unknown[]>('DELETE FROM backfills WHERE name = ?');
  const step = db.transaction((): boolean => {
    const row = pending.get(REPORT_BACKFILL) as { position: string | null } | undefined;
    if (row === undefined) return false;
    const after = row.position === null ? 0 : Number(row.position);
    const rows = select.all(after, batch) as Array<{ rowid: number; properties: string; user_agent: string | null }>;
    for (const r of rows) {
      const values = backfilledValues(extractor.extract(parseProperties(r.properties), r.user_agent)).map(cleanNullableText);
      update.run(...values, r.rowid);
    }
    if (rows.length < batch) {
      finish.run(REPORT_BACKFILL);
      return false;
    }
    advance.run(String(rows[rows.length - 1]!.rowid), REPORT_BACKFILL);
    return true;
  });
  while (step.immediate()) {
    // One transaction per batch: another connection's writes can interleave between them.
  }
}

/** Key of the advisory lock that serialises the batches of several processes on one database. */
const BACKFILL_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-analytics:backfill'))";

/**
 * Fills the report columns of a PostgreSQL database's older rows, if a backfill is pending. Several
 * processes may run it at once: each batch takes the advisory lock and reads the position anew.
 */
export async function backfillPostgresReportColumns(pool: pg.Pool, batch = BACKFILL_BATCH): Promise<void> {
  const extractor = createDimensionExtractor();
  for (;;) {
    const client = await pool.connect();
    let more = false;
    try {
      await client.query('BEGIN');
      await client.query(BACKFILL_LOCK_SQL);
      const pending = await client.query<{ position: string | null }>('SELECT position FROM backfills WHERE name = $1', [REPORT_BACKFILL]);
      const row = pending.rows[0];
      if (row !== undefined) {
        const [afterProject, afterEvent] = row.position === null ? ['', ''] : (JSON.parse(row.position) as [string, string]);
        const { rows } = await client.query<{ project_id: string; event_id: string; properties: Record<string, PropertyValue>; user_agent: string | null }>(
          `SELECT project_id, event_id, properties, user_agent FROM events
           WHERE (project_id, event_id) > ($1, $2) ORDER BY project_id, event_id LIMIT $3`,
          [afterProject, afterEvent, batch],
        );
        if (rows.length > 0) {
          const values = rows.map((r) => {
            const [path, host, referrerHost, channel, utmSource, utmMedium, utmCampaign, browser, os, device, screenClass, anonymousId] =
              backfilledValues(extractor.extract(r.properties ?? {}, r.user_agent));
            return { p: r.project_id, e: r.event_id, path, host, rh: referrerHost, ch: channel, us: utmSource, um: utmMedium, uc: utmCampaign, b: browser, o: os, d: device, sc: screenClass, a: anonymousId };
          });
          await client.query(
            `UPDATE events e SET path = x.path, host = x.host, referrer_host = x.rh, channel = x.ch, utm_source = x.us,
               utm_medium = x.um, utm_campaign = x.uc, browser = x.b, os = x.o, device = x.d, screen_class = x.sc,
               anonymous_id = x.a, client_timestamp = COALESCE(e.client_timestamp, e.timestamp)
             FROM jsonb_to_recordset($1::jsonb) AS x (p text, e text, path text, host text, rh text, ch text, us text, um text,
               uc text, b text, o text, d text, sc text, a text)
             WHERE e.project_id = x.p AND e.event_id = x.e`,
            [cleanJson(JSON.stringify(values))],
          );
        }
        if (rows.length < batch) {
          await client.query('DELETE FROM backfills WHERE name = $1', [REPORT_BACKFILL]);
        } else {
          const last = rows[rows.length - 1]!;
          await client.query('UPDATE backfills SET position = $1 WHERE name = $2', [JSON.stringify([last.project_id, last.event_id]), REPORT_BACKFILL]);
          more = true;
        }
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      throw error;
    }
    client.release();
    if (!more) return;
  }
}
