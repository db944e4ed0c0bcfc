import Database from 'better-sqlite3';
import pg from 'pg';
import { isPostgresUrl } from '../../server/store/open-store.js';

/**
 * A direct, read-only look into a store's database for tests that check what was written: not
 * through the server or the store, so a bug there cannot hide a missing row.
 */
export interface StoredRows {
  /** Ids of the events stored for `projectId`. */
  eventIds(projectId: string): Promise<Set<string>>;
  /** Rows stored: events and recording chunks, for one project or all. */
  count(projectId?: string): Promise<{ events: number; chunks: number }>;
  /** Every text value of every table, one string: to search for a secret that must not be there. */
  dump(): Promise<string>;
  close(): Promise<void>;
}

const TABLES = ['projects', 'api_keys', 'events', 'recording_chunks'];

/** Opens `location` (a SQLite path or a postgres:// URL) for reading. */
export async function openStoredRows(location: string): Promise<StoredRows> {
  if (isPostgresUrl(location)) {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    const count = async (sql: string, params: unknown[]) => Number((await client.query<{ n: string }>(sql, params)).rows[0]?.n ?? 0);
    return {
      async eventIds(projectId) {
        const { rows } = await client.query<{ event_id: string }>('SELECT event_id FROM events WHERE project_id = $1', [projectId]);
        return new Set(rows.map((r) => r.event_id));
      },
      async count(projectId) {
        const where = projectId === undefined ? '' : ' WHERE project_id = $1';
        const params = projectId === undefined ? [] : [projectId];
        return {
          events: await count(`SELECT count(*) AS n FROM events${where}`, params),
          chunks: await count(`SELECT count(*) AS n FROM recording_chunks${where}`, params),
        };
      },
      async dump() {
        const parts: string[] = [];
        for (const table of TABLES) {
          const { rows } = await client.query(`SELECT t::text AS row FROM ${table} t`);
          for (const r of rows as Array<{ row: string }>) parts.push(r.row);
        }
        return parts.join('\n');
      },
      close: () => client.end(),
    };
  }
  const db = new Database(location, { readonly: true, fileMustExist: true });
  const idsOf = db.prepare<[string], { event_id: string }>('SELECT event_id FROM events WHERE project_id = ?');
  return {
    async eventIds(projectId) {
      return new Set(idsOf.all(projectId).map((r) => r.event_id));
    },
    async count(projectId) {
      const where = projectId === undefined ? '' : ' WHERE project_id = ?';
      const args = projectId === undefined ? [] : [projectId];
      const n = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}${where}`).get(...args) as { n: number }).n;
      return { events: n('events'), chunks: n('recording_chunks') };
    },
    async dump() {
      const parts: string[] = [];
      for (const table of TABLES) {
        for (const row of db.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>) {
          parts.push(Object.values(row).map(String).join('\t'));
        }
      }
      return parts.join('\n');
    },
    close: async () => void db.close(),
  };
}
