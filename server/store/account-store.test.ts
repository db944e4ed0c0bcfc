import { describeAccountStore } from '../../test-support/store/account-store.contract.js';
import { chdbStore } from '../../test-support/store/clickhouse-chdb.js';

// The ClickHouse store keeps accounts, sessions and links in its configuration store (SQLite here),
// as it keeps projects and keys: the contract through its delegation. SQLite and PostgreSQL run it
// in their own store tests.
describeAccountStore('clickhouse (configuration store)', async () => chdbStore());
