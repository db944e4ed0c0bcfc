import { afterAll } from 'vitest';
import { describeAggregates } from '../../../test-support/store/aggregate.contract.js';
import { sqliteLocations } from '../../../test-support/store/database-locations.js';

const locations = sqliteLocations('aggregates-sqlite-test-');

afterAll(() => locations.remove());

describeAggregates('sqlite', () => locations.next());
