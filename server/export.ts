import { eventToWire } from './routes/event-wire.js';
import type { EventRow, EventStore } from './store/event-store.js';

/** Events per page of an export: what one export holds in memory at a time. */
export const EXPORT_PAGE_SIZE = 1000;

/** What an export covers: a project's events with `from <= timestamp < to` (ms), either bound optional. */
export interface ExportRange {
  projectId: string;
  from?: number;
  to?: number;
}

/**
 * Opens an export of a project's events as NDJSON lines (one event per line, the read API's event
 * fields), oldest first. The first page is read before this resolves, so a store failure surfaces
 * before the caller commits to an answer; after that, the lines come page by page (keyset
 * pagination on the time index, `EventStore.exportEvents`), one page in memory at a time, and the
 * next page is read only when the consumer asks for more lines: memory stays constant whatever
 * the range holds.
 *
 * Not a snapshot: an event stored during the export shows if its place lies ahead of the page being
 * read, and not if behind it.
 */
export async function openEventExport(store: EventStore, range: ExportRange, pageSize = EXPORT_PAGE_SIZE): Promise<AsyncGenerator<string>> {
  const query = { projectId: range.projectId, limit: pageSize, ...(range.from === undefined ? {} : { from: range.from }), ...(range.to === undefined ? {} : { to: range.to }) };
  const first = await store.exportEvents(query);
  async function* lines(): AsyncGenerator<string> {
    let page: EventRow[] = first;
    for (;;) {
      for (const row of page) yield `${JSON.stringify(eventToWire(row))}\n`;
      const last = page[page.length - 1];
      if (page.length < pageSize || last === undefined) return;
      page = await store.exportEvents({ ...query, after: { timestamp: last.timestamp, eventId: last.eventId } });
    }
  }
  return lines();
}
