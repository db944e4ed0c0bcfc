import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { describeAggregates } from '../../../test-support/store/aggregate.contract.js';
import { createSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'aggregates-sqlite-test-'));
let files = 0;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeAggregates('sqlite', async () => {
  const path = join(dir, `aggregates-${++files}.db`);
  return {
    open: () => createSqliteStore({ path }),
    async sql(text, values = []) {
      const db = new Database(path);
      try {
        const statement = db.prepare(text);
        const bound = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
        return statement.reader ? (statement.all(...bound) as Array<Record<string, unknown>>) : (statement.run(...bound), []);
      } finally {
        db.close();
      }
    },
  };
});
