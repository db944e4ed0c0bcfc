import { afterAll, describe } from 'vitest';
import { describeEventStore } from '../../../test-support/store/event-store.contract.js';
import { describeReportStore } from '../../../test-support/store/report-store.contract.js';
import { newConfigStore } from '../../../test-support/store/clickhouse-chdb.js';
import { createClickHouseStore } from './clickhouse-store.js';
import { createHttpTransport } from './http-transport.js';

/*
 * The store contracts over HTTP, through the official client, against a real ClickHouse server:
 * set CLICKHOUSE_URL (`http://default:@127.0.0.1:8123`, docs/deploy.md) to run them. Each store
 * gets a database of its own, dropped when the file is done. Without the variable the suites are
 * reported as skipped: the SQL is the same text the chDB suites run (`clickhouse-store.test.ts`).
 */

const url = process.env.CLICKHOUSE_URL;
const databases: string[] = [];

afterAll(async () => {
  if (url === undefined || databases.length === 0) return;
  const transport = createHttpTransport({ url });
  try {
    for (const database of databases) await transport.command(`DROP DATABASE IF EXISTS ${database}`);
  } finally {
    await transport.close();
  }
});

/** A store on a new database of the server at CLICKHOUSE_URL. */
const httpStore = async () => {
  const database = `sa_test_http_${process.pid}_${databases.length + 1}`;
  databases.push(database);
  return createClickHouseStore({ transport: createHttpTransport({ url: url as string }), config: newConfigStore(), database });
};

describe.skipIf(url === undefined)('clickhouse over HTTP (CLICKHOUSE_URL)', () => {
  describeEventStore('clickhouse-http', httpStore);
  describeReportStore('clickhouse-http', httpStore);
});
