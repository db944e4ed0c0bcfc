import type { Session } from 'chdb';
import { type ClickHouseTransport, INSERT_SETTINGS, type Params, READ_SETTINGS, type Row, type Settings } from './clickhouse-transport.js';

/*
 * ClickHouse's own engine in this process, through the `chdb` package: the same SQL as a server
 * runs, without one. The tests run the store on it (`test-support/store/clickhouse-chdb.ts`);
 * `chdb` is a development dependency, so this file is reached from no entry point of the server
 * package.
 */

/** Options of {@link createChdbTransport}. */
export interface ChdbTransportOptions {
  /**
   * The chDB session to run on. libchdb binds one data directory per process, so the caller owns
   * the session and shares it among transports (each store names its own database).
   */
  session: Session;
}

/** A `SETTINGS` clause: chDB's calls take no settings, so they travel in the statement's text. */
function settingsClause(settings: Settings): string {
  const entries = Object.entries(settings);
  if (entries.length === 0) return '';
  const value = (v: string | number | boolean): string => (typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(Number(v)));
  return ` SETTINGS ${entries.map(([name, v]) => `${name} = ${value(v)}`).join(', ')}`;
}

/**
 * A transport over a chDB session: statements run off the event loop (`queryBindAsync`), values
 * are bound by the engine like a server's query parameters, and inserts pass their
 * `JSONEachRow` text to the engine's parser. `close()` leaves the session open (its owner closes it).
 */
export function createChdbTransport(options: ChdbTransportOptions): ClickHouseTransport {
  const { session } = options;
  const run = async (sql: string, params: Params): Promise<string> => (await session.queryBindAsync(sql, params, { format: 'JSONEachRow' })).text();
  return {
    async query(sql: string, params: Params = {}, settings?: Settings): Promise<Row[]> {
      const text = await run(sql + settingsClause({ ...READ_SETTINGS, ...settings }), params);
      return text === '' ? [] : text.trimEnd().split('\n').map((line) => JSON.parse(line) as Row);
    },
    async command(sql: string, params: Params = {}, settings?: Settings): Promise<void> {
      await run(sql + settingsClause(settings ?? {}), params);
    },
    async insert(table: string, rows: readonly Row[], settings?: Settings): Promise<void> {
      if (rows.length === 0) return;
      const body = rows.map((row) => JSON.stringify(row)).join('\n');
      const merged = { ...INSERT_SETTINGS, ...settings };
      await session.insert({ table, values: Buffer.from(body, 'utf8'), format: 'JSONEachRow', settings: merged });
    },
    async close(): Promise<void> {},
  };
}
