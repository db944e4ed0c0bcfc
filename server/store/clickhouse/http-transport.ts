import { ClickHouseLogLevel, type ClickHouseSettings, createClient } from '@clickhouse/client';
import { type ClickHouseTransport, INSERT_SETTINGS, type Params, READ_SETTINGS, type Row, type Settings } from './clickhouse-transport.js';

/** Options of {@link createHttpTransport}. */
export interface HttpTransportOptions {
  /**
   * The server's HTTP address, `http[s]://[user:password@]host:8123[/database]` (the official
   * client's URL form; a path names the connection's default database, which the store does not
   * rely on: it names its database in every statement).
   */
  url: string;
  /** How long one request may take, ms. @default 300000 (erasure and retention can be long mutations) */
  requestTimeoutMs?: number;
  /** Sockets kept open to the server. @default 10 */
  maxOpenConnections?: number;
}

/**
 * The transport of a server: the official `@clickhouse/client` over HTTP. Values travel as
 * ClickHouse's own query parameters (`{name:Type}`, bound by the server), never spliced into SQL
 * text; inserts send `JSONEachRow` bodies.
 */
export function createHttpTransport(options: HttpTransportOptions): ClickHouseTransport {
  const client = createClient({
    url: options.url,
    request_timeout: options.requestTimeoutMs ?? 300_000,
    max_open_connections: options.maxOpenConnections ?? 10,
    // A failed statement rejects its promise, and the server logs errors in one place; the
    // client's own console output would log each one twice.
    log: { level: ClickHouseLogLevel.OFF },
  });
  // The client's settings type lists every known setting; ours are checked by the server instead.
  const settingsOf = (base: Settings, extra: Settings | undefined): ClickHouseSettings => ({ ...base, ...extra }) as ClickHouseSettings;
  return {
    async query(sql: string, params: Params = {}, settings?: Settings): Promise<Row[]> {
      const result = await client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: settingsOf(READ_SETTINGS, settings) });
      return result.json<Row>();
    },
    async command(sql: string, params: Params = {}, settings?: Settings): Promise<void> {
      // `wait_end_of_query` holds the answer until the statement finished (a DDL or a mutation
      // answered early could be followed by a read that does not see it yet).
      await client.command({ query: sql, query_params: params, clickhouse_settings: settingsOf({ wait_end_of_query: 1 }, settings) });
    },
    async insert(table: string, rows: readonly Row[], settings?: Settings): Promise<void> {
      if (rows.length === 0) return;
      await client.insert({ table, values: [...rows], format: 'JSONEachRow', clickhouse_settings: settingsOf(INSERT_SETTINGS, settings) });
    },
    close: () => client.close(),
  };
}
