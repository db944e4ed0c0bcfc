import { afterAll } from 'vitest';
import { describeRollups } from '../../../test-support/store/rollup.contract.js';
import { sqliteLocations } from '../../../test-support/store/database-locations.js';

const locations = sqliteLocations('rollup-sqlite-test-');

afterAll(() => locations.remove());

describeRollups('sqlite', () => locations.next());
