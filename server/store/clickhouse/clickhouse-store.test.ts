import { describeEventStore } from '../../../test-support/store/event-store.contract.js';
import { describeReportStore } from '../../../test-support/store/report-store.contract.js';
import { chdbStore } from '../../../test-support/store/clickhouse-chdb.js';

// The store contracts on ClickHouse's own engine (chDB), each test on a fresh database.
describeEventStore('clickhouse', async () => chdbStore());
describeReportStore('clickhouse', async () => chdbStore());
