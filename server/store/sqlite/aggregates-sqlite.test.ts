import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeProject } from '../../../test-support/server/report-fixtures.js';
import { describeAggregates } from '../../../test-support/store/aggregate.contract.js';
import { sqliteLocations, sqliteSql } from '../../../test-support/store/database-locations.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createSqliteStore } from './sqlite-store.js';

const locations = sqliteLocations('aggregates-sqlite-test-');
const dir = mkdtempSync(join(tmpdir(), 'aggregates-sqlite-build-'));

afterAll(() => {
  locations.remove();
  rmSync(dir, { recursive: true, force: true });
});

describeAggregates('sqlite', () => locations.next());

describe('sqlite: the aggregates build at open', () => {
  it('says when it builds the aggregates from the events, and not for a new database or one already built', async () => {
    const path = join(dir, 'told.db');
    const told: string[] = [];
    const open = () => createSqliteStore({ path, onAggregatesBuild: (phase) => told.push(phase) });
    const first = open();
    await first.init();
    await writeProject(first, { projectId: newProjectId(), start: Date.UTC(2026, 1, 2), days: 1, sessions: 5, seed: 31 }, 100);
    await first.close();
    expect(told).toEqual([]);
    await sqliteSql(path, 'DROP TABLE agg_meta');
    const second = open();
    await second.init();
    await second.close();
    expect(told).toEqual(['building', 'built']);
    const third = open();
    await third.init();
    await third.close();
    expect(told).toEqual(['building', 'built']);
  });
});
