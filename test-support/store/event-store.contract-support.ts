import { afterEach, beforeEach, expect } from 'vitest';
import type { EventQuery, EventRow, EventStore } from '../../server/store/event-store.js';
import { newProjectId } from './event-store.fixtures.js';

/** Makes a store for one test; the suite calls `init()` on it and `close()` after the test. */
export type MakeStore = () => Promise<EventStore>;

/** What a test body gets: the initialised store and a project of its own. */
export interface ContractContext {
  store: EventStore;
  projectId: string;
}

/**
 * Registers hooks that give every test of the enclosing `describe` a fresh, initialised store
 * (closed after the test) and a project id of its own. Read the fields inside tests only.
 */
export function useStore(makeStore: MakeStore): ContractContext {
  const context = {} as ContractContext;
  beforeEach(async () => {
    context.store = await makeStore();
    await context.store.init();
    context.projectId = newProjectId();
  });
  afterEach(async () => {
    await context.store.close();
  });
  return context;
}

/** All events of a query, walking every page. */
export async function allPages(store: EventStore, query: EventQuery): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  let cursor = query.cursor;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.queryEvents({ ...query, cursor });
    expect(result.events.length).toBeLessThanOrEqual(query.limit);
    rows.push(...result.events);
    if (result.nextCursor === null) return rows;
    cursor = result.nextCursor;
  }
  throw new Error('pagination did not end');
}

