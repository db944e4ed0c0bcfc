/**
 * The unload path's sender (docs/architecture.md, "The unload path"; docs/decisions.md, "Unload"):
 * the events the server has not acknowledged go out with `navigator.sendBeacon` to the beacon form
 * of the batch endpoint (`Content-Type: text/plain`, credentials in the query, same JSON array
 * body). A beacon carries at most 60 KB; a larger set is split, and a refused beacon is split in
 * halves and retried, down to one event. The server dedupes on `event_id`, so a beacon that repeats
 * a worker send is harmless.
 */
import { toBackendEvent } from '../../protocol/event-model/event-mapping.js';
import type { AnalyticsEvent } from '../../protocol/event-model/analytics-event.js';
import { expandColumns } from '../../protocol/event-model/event-columns.js';
import { filterColumns, liveColumns, rangesOfCounters } from '../delivery/mirror-columns.js';
import type { Logger } from '../logger.js';
import type { DeliveryClient } from '../delivery/delivery-client.js';

/**
 * Largest beacon body: LIMITS.maxBeaconBytes of protocol/limits.ts (a test keeps them equal). A
 * copy, because importing LIMITS would put the whole limits object in the facade's bundle.
 */
export const MAX_BEACON_BYTES = 60 * 1024;

/** Where and how beacons go. */
export interface BeaconTarget {
  endpoint: string;
  apiKey: string;
  projectId: string;
  /** `navigator.sendBeacon`, bound; returns false when the browser refuses the beacon. */
  sendBeacon: (url: string, body: string) => boolean;
  now: () => number;
  /** Largest body in bytes. @default MAX_BEACON_BYTES (60 KB) */
  maxBytes?: number;
}

/** What {@link sendByBeacon} did. */
export interface BeaconResult {
  /** Ids of events in beacons the browser accepted. */
  sent: string[];
  /** Ids of events not sent: refused beacons, or an event larger than a beacon. */
  unsent: string[];
}

/** The beacon form's address: the batch endpoint with key, project and send time in the query. */
export function beaconUrl(target: Pick<BeaconTarget, 'endpoint' | 'apiKey' | 'projectId'>, sentAt: number): string {
  const query = new URLSearchParams({
    api_key: target.apiKey,
    project_id: target.projectId,
    sent_at: new Date(sentAt).toISOString(),
  });
  return `${target.endpoint}/api/v1/events/batch?${query.toString()}`;
}

/** Sends `events` by beacon, split to fit. Never throws. */
export function sendByBeacon(events: readonly AnalyticsEvent[], target: BeaconTarget): BeaconResult {
  const result: BeaconResult = { sent: [], unsent: [] };
  if (events.length === 0) return result;
  const maxBytes = target.maxBytes ?? MAX_BEACON_BYTES;
  const url = beaconUrl(target, target.now());
  const encoder = new TextEncoder();

  const items: Array<{ id: string; json: string; bytes: number }> = [];
  for (const event of events) {
    try {
      const json = JSON.stringify(toBackendEvent(event));
      const bytes = encoder.encode(json).length;
      // "[" + json + "]" must fit on its own.
      if (bytes + 2 > maxBytes) result.unsent.push(event.id);
      else items.push({ id: event.id, json, bytes });
    } catch {
      result.unsent.push(event.id);
    }
  }

  // Greedy packing in order; a comma per extra event, brackets once.
  let refused = false;
  let chunk: typeof items = [];
  let size = 2;
  const send = (part: typeof items): void => {
    if (part.length === 0) return;
    if (refused) {
      for (const item of part) result.unsent.push(item.id);
      return;
    }
    let accepted = false;
    try {
      accepted = target.sendBeacon(url, `[${part.map((item) => item.json).join(',')}]`);
    } catch {
      accepted = false;
    }
    if (accepted) {
      for (const item of part) result.sent.push(item.id);
    } else if (part.length > 1) {
      const half = Math.ceil(part.length / 2);
      send(part.slice(0, half));
      send(part.slice(half));
    } else {
      // Even one event was refused: the browser's beacon quota is spent; stop trying.
      refused = true;
      result.unsent.push(part[0]!.id);
    }
  };
  for (const item of items) {
    const added = item.bytes + (chunk.length === 0 ? 0 : 1);
    if (chunk.length > 0 && size + added > maxBytes) {
      send(chunk);
      chunk = [];
      size = 2;
    }
    size += item.bytes + (chunk.length === 0 ? 0 : 1);
    chunk.push(item);
  }
  send(chunk);
  return result;
}

/** What {@link beaconPending} needs besides the client's delivery. */
export interface PagehideBeacon {
  win: Window;
  config: Pick<BeaconTarget, 'endpoint' | 'apiKey' | 'projectId'>;
  /** @default `navigator.sendBeacon` of `win` */
  sendBeacon: BeaconTarget['sendBeacon'] | undefined;
  now: () => number;
  log: Logger;
}

/**
 * The client's `pagehide` (`unload-path.ts`): {@link beaconPending} now, and at the end of every
 * task until the page is shown again. Listeners run in the order they were added, so a `pagehide`
 * or `visibilitychange` listener added after the client's (performance tracking's, the app's) may
 * still make events, and the worker may be stopped at any moment.
 */
export function beaconFromPageHide(delivery: DeliveryClient, target: PagehideBeacon): void {
  const beacon = (): void => {
    try {
      beaconPending(delivery, target);
    } catch (error) {
      target.log.error('the pagehide beacon failed', error); // The worker's send may still go out.
    }
  };
  beacon();
  delivery.atTaskEnd(beacon);
  // After pagehide, a pageshow is a restore from the back/forward cache: the worker runs again.
  target.win.addEventListener('pageshow', () => delivery.atTaskEnd(undefined), { once: true });
}

/**
 * The pagehide beacon of one client (`unload-path.ts`): the events `delivery` holds unacknowledged
 * (its mirror) and buffered, less those already beaconed, sent by {@link sendByBeacon}; what went
 * out is forgotten, so a later pagehide (a page restored from the bfcache) does not send it again.
 * The facade keeps these events in columns; objects are made only here, so that code stays out of
 * its bundle. Never throws.
 */
export function beaconPending(delivery: DeliveryClient, { win, config, sendBeacon, now, log }: PagehideBeacon): void {
  const { posted, buffer, beaconed } = delivery.pending();
  const live = liveColumns(posted);
  const fresh = filterColumns([buffer], (counter) => !beaconed.has(counter));
  const events = [...expandColumns(live), ...expandColumns(fresh)];
  if (events.length === 0) return;
  const nav = win.navigator;
  const send = sendBeacon ?? (typeof nav?.sendBeacon === 'function' ? (url: string, body: string) => nav.sendBeacon(url, body) : undefined);
  if (send === undefined) return log.debug(`no sendBeacon here; ${events.length} unacknowledged event(s) may be lost`);
  const result = sendByBeacon(events, { endpoint: config.endpoint, apiKey: config.apiKey, projectId: config.projectId, sendBeacon: send, now });
  const sentIds = new Set(result.sent);
  // The events are in the columns' order: event k's id counter is the k-th of live, then fresh.
  const counters = [...live.idCounters, ...fresh.idCounters];
  const sent = new Set(counters.filter((_, k) => sentIds.has(events[k]!.id)));
  delivery.forget(
    rangesOfCounters(posted, sent),
    buffer.idCounters.filter((counter) => sent.has(counter)),
  );
  log.debug(`pagehide: ${sent.size} event(s) sent by beacon${result.unsent.length > 0 ? `, ${result.unsent.length} could not be` : ''}`);
}
