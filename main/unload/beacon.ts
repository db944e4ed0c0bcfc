/**
 * The unload path's sender (docs/architecture.md, "The unload path"; docs/decisions.md, "Unload"):
 * the events the server has not acknowledged go out with `navigator.sendBeacon` to the beacon form
 * of the batch endpoint (`Content-Type: text/plain`, credentials in the query, the same JSON array
 * body, gzipped with `encoding=gzip` in the query). A beacon carries at most 60 KB as sent; a
 * larger part is split, and a refused beacon is split in halves and retried, down to one event.
 * The server dedupes on `event_id`, so a beacon that repeats a worker send is harmless.
 */
import { toBackendEvent } from '../../protocol/event-model/event-mapping.js';
import type { AnalyticsEvent } from '../../protocol/event-model/analytics-event.js';
import { expandColumns } from '../../protocol/event-model/event-columns.js';
import { toRanges } from '../../protocol/worker/number-ranges.js';
import { liveColumns } from '../delivery/log-columns.js';
import { gzip } from './gzip.js';
import { createJsonArrayBytes } from '../../protocol/json-array-bytes.js';
import type { Logger } from '../logger.js';
import type { PendingEvents } from '../delivery/unacked-log.js';

/**
 * Largest beacon body: LIMITS.maxBeaconBytes of protocol/limits.ts (a test keeps them equal). A
 * copy, because importing LIMITS would put the whole limits object in the facade's bundle.
 */
export const MAX_BEACON_BYTES = 60 * 1024;

/**
 * Most the server takes in one batch: its event count and decompressed size (LIMITS of
 * protocol/limits.ts, copied for the same reason; a test keeps them equal).
 */
export const MAX_BATCH_EVENTS = 1000;
export const MAX_BATCH_BYTES = 1024 * 1024;

/** Bodies smaller than this go as they are: gzip would cost more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;

/** A beacon body: JSON text, or gzip bytes of it (sent as `text/plain` with `encoding=gzip`). */
export type BeaconBody = string | Uint8Array;

/** Where and how beacons go. */
export interface BeaconTarget {
  endpoint: string;
  apiKey: string;
  projectId: string;
  /** `navigator.sendBeacon`, bound; returns false when the browser refuses the beacon. */
  sendBeacon: (url: string, body: BeaconBody) => boolean;
  now: () => number;
  /** Largest body in bytes, as sent. @default MAX_BEACON_BYTES (60 KB) */
  maxBytes?: number;
  /** The time zone for events whose context has none (`PendingEvents.timezone`). */
  timezone?: string | undefined;
  /**
   * Synchronous gzip, or false to send plain JSON. A beacon has to be handed over during
   * `pagehide`, where nothing asynchronous is sure to finish, so the platform's CompressionStream
   * cannot serve; realistic events shrink about tenfold, which is what lets a visit's last hundreds
   * of events fit the browsers' 64 KB in-flight budget for beacons. @default fflate's gzipSync (`gzip.ts`)
   */
  compress?: ((data: Uint8Array) => Uint8Array) | false;
}

/** What {@link sendByBeacon} did. */
export interface BeaconResult {
  /** Ids of events in beacons the browser accepted. */
  sent: string[];
  /** Ids of events not sent: refused beacons, or an event larger than a beacon. */
  unsent: string[];
}

/** The beacon form's address: the batch endpoint with key, project and send time in the query. */
export function beaconUrl(target: Pick<BeaconTarget, 'endpoint' | 'apiKey' | 'projectId'>, sentAt: number, gzip = false): string {
  const query = new URLSearchParams({
    api_key: target.apiKey,
    project_id: target.projectId,
    sent_at: new Date(sentAt).toISOString(),
  });
  if (gzip) query.set('encoding', 'gzip');
  return `${target.endpoint}/api/v1/events/batch?${query.toString()}`;
}

/** What browsers let keepalive requests (beacons included) have in flight at once, in bytes. */
export const KEEPALIVE_BUDGET_BYTES = 64 * 1024;

/** Bytes of this library's unload requests in flight, per window: the browser refuses past its budget. */
const inFlight = new WeakMap<object, { bytes: number }>();

/**
 * The page's unload sender, or undefined where there is none. Where `fetch` takes `keepalive`, a
 * keepalive `fetch` with `credentials: 'omit'`: the browser finishes it after the page is gone,
 * as it does a beacon, but unlike `navigator.sendBeacon` (whose requests always carry the page's
 * cookies for the server's site) it sends no cookies. The browser answers a keepalive request
 * over its budget with a rejection that comes too late to split the body, so the budget is
 * counted here, and the request is refused (false) when it would not fit. Elsewhere,
 * `navigator.sendBeacon`, bound. Either way the body goes as `text/plain`: no CORS preflight.
 */
export function platformSendBeacon(win: Window): BeaconTarget['sendBeacon'] | undefined {
  const asBody = (body: BeaconBody): BodyInit => (typeof body === 'string' ? body : new Blob([body as Uint8Array<ArrayBuffer>], { type: 'text/plain' }));
  const RequestCtor = (win as { Request?: typeof Request }).Request;
  if (typeof win.fetch === 'function' && typeof RequestCtor === 'function' && 'keepalive' in RequestCtor.prototype) {
    let budget = inFlight.get(win);
    if (budget === undefined) inFlight.set(win, (budget = { bytes: 0 }));
    const counter = budget;
    return (url, body) => {
      const size = typeof body === 'string' ? new TextEncoder().encode(body).length : body.length;
      if (counter.bytes + size > KEEPALIVE_BUDGET_BYTES) return false;
      counter.bytes += size;
      const done = (): void => {
        counter.bytes -= size;
      };
      win.fetch(url, { method: 'POST', body: asBody(body), keepalive: true, credentials: 'omit', mode: 'cors' }).then(done, done);
      return true;
    };
  }
  const nav = win.navigator;
  return typeof nav?.sendBeacon === 'function' ? (url, body) => nav.sendBeacon(url, asBody(body)) : undefined;
}

interface Item {
  id: string;
  /** Where its JSON starts and ends among the events' (`JsonArrayBytes` offsets). */
  start: number;
  end: number;
}

/**
 * Sends `events` by beacon, as few as fit: parts of at most what the server takes in one batch,
 * each gzipped (when `compress` is on and it pays) and split in halves while it is over `maxBytes`
 * or refused, down to one event. Stops at the first single event the browser refuses (its beacon
 * budget is spent). In order; never throws.
 */
export function sendByBeacon(events: readonly AnalyticsEvent[], target: BeaconTarget): BeaconResult {
  const result: BeaconResult = { sent: [], unsent: [] };
  if (events.length === 0) return result;
  const maxBytes = target.maxBytes ?? MAX_BEACON_BYTES;
  const compress = target.compress === undefined ? gzip : target.compress;
  const now = target.now();

  // Each event's JSON is encoded once and each part copied out (`json-array-bytes.ts`): this runs
  // inside pagehide, where encoding per event and again per part was main-thread time.
  const json = createJsonArrayBytes();
  const items: Item[] = [];
  let start = 0;
  for (const event of events) {
    try {
      const end = json.push(JSON.stringify(toBackendEvent(event, target.timezone)));
      items.push({ id: event.id, start, end });
      start = end + 1;
    } catch {
      result.unsent.push(event.id);
    }
  }

  let refused = false;
  const send = (part: Item[]): void => {
    if (part.length === 0) return;
    if (refused) {
      for (const item of part) result.unsent.push(item.id);
      return;
    }
    // The part's events are consecutive.
    const data = json.array(part[0]!.start, part[part.length - 1]!.end);
    const rawBytes = data.length;
    let body: BeaconBody | undefined;
    let gzip = false;
    if (compress !== false && rawBytes >= COMPRESS_MIN_BYTES) {
      try {
        body = compress(data);
        gzip = true;
      } catch {
        // Compression is an optimisation; a plain body is still valid.
      }
    }
    body ??= new TextDecoder().decode(data);
    const size = typeof body === 'string' ? rawBytes : body.length;
    let accepted = false;
    if (size <= maxBytes) {
      try {
        accepted = target.sendBeacon(beaconUrl(target, now, gzip), body);
      } catch {
        accepted = false;
      }
    }
    if (accepted) {
      for (const item of part) result.sent.push(item.id);
    } else if (part.length > 1) {
      const half = Math.ceil(part.length / 2);
      send(part.slice(0, half));
      send(part.slice(half));
    } else {
      // One event: larger than a beacon even compressed, or refused, and then the browser's
      // beacon budget is spent: stop trying.
      if (size <= maxBytes) refused = true;
      result.unsent.push(part[0]!.id);
    }
  };

  // Parts as large as the server takes in one batch; the halving above fits them to a beacon.
  let part: Item[] = [];
  let bytes = 2;
  for (const item of items) {
    const itemBytes = item.end - item.start;
    if (part.length > 0 && (part.length >= MAX_BATCH_EVENTS || bytes + itemBytes + 1 > MAX_BATCH_BYTES)) {
      send(part);
      part = [];
      bytes = 2;
    }
    part.push(item);
    bytes += itemBytes + 1;
  }
  send(part);
  return result;
}

/**
 * What the beacon reads of the client's delivery (`DeliveryClient` of `delivery-client.ts`, which
 * this module does not import: it comes in the lazy chunk of the client's connection).
 */
export interface BeaconSource {
  pending(): PendingEvents;
  forget(ranges: readonly number[]): void;
  atTaskEnd(hook: (() => void) | undefined): void;
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
export function beaconFromPageHide(delivery: BeaconSource, target: PagehideBeacon): void {
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
 * (its log, the buffer included), less those the armed deferred request carries
 * (`deferred-request.ts`: the browser sends it), sent by {@link sendByBeacon}. Where the
 * page holds the core's body instead of arming it (no `fetchLater`), that body goes first, as it
 * is, and its events are not encoded again here. What went out is forgotten, so a later pagehide
 * (a page restored from the bfcache) does not send it again. The facade keeps these events in
 * columns; objects are made only here, so that code stays out of its bundle. Never throws.
 */
export function beaconPending(delivery: BeaconSource, { win, config, sendBeacon, now, log }: PagehideBeacon): void {
  const { chunks, timezone, covered, held } = delivery.pending();
  const send = sendBeacon ?? platformSendBeacon(win);
  // What the armed deferred request carries, the browser sends: not twice in one unload, since
  // both share the browsers' in-flight budget (deferred-request.ts).
  let live = liveColumns(chunks, covered);
  if (held !== undefined && send !== undefined) {
    // The core built this body off the main thread: one beacon here instead of the JSON and gzip
    // of its events. Only while most of them still wait for the server: a body of mostly stored
    // events would take from the in-flight budget what the rest needs, and a few are cheap to
    // encode here. Refused (that budget), its events go below like the rest.
    const all = liveColumns(chunks);
    const waiting = all.timestamps.length - live.timestamps.length;
    if (waiting * 2 > countOf(held.covered) && sendHeld(send, held)) {
      delivery.forget(held.covered);
      log.debug(`pagehide: ${waiting} event(s) sent in the body the core built`);
    } else live = all;
  }
  const events = expandColumns(live);
  if (events.length === 0) return;
  if (send === undefined) return log.debug(`no keepalive fetch or sendBeacon here; ${events.length} unacknowledged event(s) may be lost`);
  const result = sendByBeacon(events, { endpoint: config.endpoint, apiKey: config.apiKey, projectId: config.projectId, sendBeacon: send, now, timezone });
  const sentIds = new Set(result.sent);
  // The events are in the columns' order: event k's number is the k-th of live.
  const sent = live.idCounters.filter((_, k) => sentIds.has(events[k]!.id));
  delivery.forget(toRanges(sent));
  log.debug(`pagehide: ${sent.length} event(s) sent by beacon${result.unsent.length > 0 ? `, ${result.unsent.length} could not be` : ''}`);
}

/** Sends a held body as it is; false when the browser refused it. */
function sendHeld(send: BeaconTarget['sendBeacon'], held: NonNullable<PendingEvents['held']>): boolean {
  try {
    return send(held.url, new Uint8Array(held.body));
  } catch {
    return false;
  }
}

/** How many numbers ascending ranges (`[from, to, …]`) hold. */
function countOf(ranges: readonly number[]): number {
  let count = 0;
  for (let i = 0; i + 1 < ranges.length; i += 2) count += ranges[i + 1]! - ranges[i]!;
  return count;
}
