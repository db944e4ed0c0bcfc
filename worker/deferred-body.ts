/**
 * The body of the facade's deferred request (`fetchLater`; docs/architecture.md, "The unload
 * path"): the core keeps, off the main thread, a ready-to-send body of the events it holds that the
 * server has not acknowledged (queued and in flight), and posts it to the facade, which arms a
 * deferred request with it. The browser sends that request when the page goes away, even when the
 * tab crashes or `pagehide` never runs.
 *
 * The body is the beacon form's (docs/protocol.md, "The beacon form"): the JSON array of the
 * events' wire forms as the core queued them, gzipped where `CompressionStream` exists
 * (`encoding=gzip` in the query), at most {@link LIMITS}.maxBeaconBytes as sent and within one
 * server batch. When the events do not all fit, the body carries the oldest that do and says so.
 *
 * Rebuilt when the set gains an event the armed body does not carry, at most once per
 * {@link REBUILD_INTERVAL_MS}, never two at once; a set that only shrank (the server acknowledged
 * some) keeps the armed body, because every re-arm costs the page's main thread and an event
 * stored twice is dropped by the server's dedupe. Also rebuilt every {@link SENT_AT_REFRESH_MS}
 * while it carries unacknowledged events, because the URL's `sent_at` is fixed when the body is
 * built and the server corrects event times by `arrival − sent_at` beyond its skew threshold
 * (docs/decisions.md, "Unload").
 */
import { createJsonArrayBytes } from '../protocol/json-array-bytes.js';
import { LIMITS } from '../protocol/limits.js';
import type { BackendEvent } from '../protocol/wire-types.js';
import type { Compressor } from '../protocol/worker/core-deps.js';
import { toRanges } from '../protocol/worker/number-ranges.js';
import type { Timers } from '../protocol/worker/timers.js';
import type { DeliveryConfig, FromWorkerMessage } from '../protocol/worker/worker-contract.js';

/**
 * Least spacing of two rebuilds (ms). Each rebuild costs the page's main thread an abort and a
 * `fetchLater` of up to 60 KB, so during a burst this spacing sets that cost (`npm run
 * bench:client`, the main-thread time after the burst); events newer than the last rebuild still
 * go by the pagehide beacon.
 */
export const REBUILD_INTERVAL_MS = 1_000;

/**
 * Longest a body stays armed before it is rebuilt with a fresh `sent_at` (ms): well inside the
 * server's default skew threshold (10 s), so a request sent later is not taken for a wrong clock.
 */
export const SENT_AT_REFRESH_MS = 5_000;

/** What the body needs of one queued event: its facade number (none: restored) and wire form. */
export interface DeferredItem {
  number: number | undefined;
  wire: BackendEvent;
}

/** The messages this module posts. */
export type DeferredMessage = Extract<FromWorkerMessage, { t: 'deferred-arm' | 'deferred-disarm' }>;

/** Options of {@link createDeferredBody}. */
export interface DeferredBodyOptions extends Timers {
  config: Pick<DeliveryConfig, 'endpoint' | 'apiKey' | 'projectId'>;
  now: () => number;
  /** gzip, or undefined to send the JSON as it is. */
  compress: Compressor | undefined;
  /** The events held unacknowledged, oldest first (read when a rebuild starts). */
  items: () => readonly DeferredItem[];
  post: (message: DeferredMessage) => void;
  log: (level: 'debug' | 'warn' | 'error', message: string) => void;
  /** Largest body as sent. @default LIMITS.maxBeaconBytes (60 KB) */
  maxBytes?: number;
  /** @default REBUILD_INTERVAL_MS */
  intervalMs?: number;
  /** @default SENT_AT_REFRESH_MS */
  refreshMs?: number;
}

/** The body keeper; create one with {@link createDeferredBody}. */
export interface DeferredBody {
  /** The set of unacknowledged events changed: a rebuild is due (coalesced). */
  changed(): void;
  /**
   * While nothing is armed and a body is being built, that build (settled when it ends), else
   * undefined. The core holds its sends until then: the body is built alone, without the sends'
   * own JSON and gzip on the same thread, so that it is armed sooner after a page's events arrive.
   */
  firstArmed(): Promise<void> | undefined;
  /**
   * The queue was cleared: a body being built now is dropped rather than posted (its events must
   * not be armed again), and a rebuild is due.
   */
  cleared(): void;
  /** Stops rebuilding (shutdown); what is armed stays armed. */
  close(): void;
}

/** Creates the body keeper; it posts nothing until the first {@link DeferredBody.changed}. */
export function createDeferredBody(options: DeferredBodyOptions): DeferredBody {
  const interval = options.intervalMs ?? REBUILD_INTERVAL_MS;
  const refreshMs = options.refreshMs ?? SENT_AT_REFRESH_MS;
  let timer: unknown;
  let refresh: unknown;
  let building = false;
  let dirty = false;
  let closed = false;
  let armed = false;
  /** Event ids the armed body carries; empty while nothing is armed. */
  let covered = new Set<string>();
  /** The armed body's `sent_at` is due for renewal. */
  let refreshDue = false;
  // The first build runs as soon as events arrive: a navigation away from a cross-origin isolated
  // page often runs no `pagehide` in Chromium, and then only an armed body carries the events
  // (docs/decisions.md, "Unload").
  let lastStart = -Infinity;
  /** Counts clears: a build that saw one while it ran posts nothing. */
  let clears = 0;

  function schedule(): void {
    if (closed || building || timer !== undefined) return;
    timer = options.setTimeout(
      () => {
        timer = undefined;
        void build();
      },
      Math.max(0, lastStart + interval - options.now()),
    );
  }

  /** An event without an id (none of the bundled client's) never counts as carried. */
  function isCovered(item: DeferredItem): boolean {
    return item.wire.event_id != null && covered.has(item.wire.event_id);
  }

  /** The build of a body while none is armed, from the change that started it to its end. */
  let first: Promise<void> | undefined;

  function changed(): void {
    dirty = true;
    // Nothing armed: build at once (in a microtask, so that the changes of this task go in
    // together), and the core holds its sends until it is armed ({@link DeferredBody.firstArmed}).
    // Still at most once per interval: a set whose oldest event fits no body stays unarmed.
    if (!armed && !building && !closed && timer === undefined && options.now() - lastStart >= interval) {
      first ??= Promise.resolve()
        .then(build)
        .finally(() => (first = undefined));
      return;
    }
    schedule();
  }

  async function build(): Promise<void> {
    if (closed) return;
    const items = options.items();
    dirty = false;
    if (armed && !refreshDue && items.length > 0 && items.every(isCovered)) return;
    building = true;
    refreshDue = false;
    lastStart = options.now();
    if (refresh !== undefined) options.clearTimeout(refresh);
    refresh = undefined;
    const clearsAtStart = clears;
    try {
      const built = items.length === 0 ? undefined : await bodyOf(items, options);
      if (closed || clears !== clearsAtStart) return;
      if (built === undefined) {
        if (items.length > 0) options.log('debug', 'the oldest unacknowledged event does not fit a deferred request; none is armed');
        if (armed) options.post({ t: 'deferred-disarm' });
        armed = false;
        covered = new Set();
        return;
      }
      options.post(built.message);
      armed = true;
      covered = built.ids;
      refresh = options.setTimeout(() => {
        refresh = undefined;
        refreshDue = true;
        changed();
      }, refreshMs);
    } catch (error) {
      // What is armed stays: it carries events still unacknowledged or already stored (deduped).
      options.log('warn', `building the deferred request's body failed: ${String(error)}`);
    } finally {
      building = false;
      if (dirty) schedule();
    }
  }

  return {
    changed,
    firstArmed: () => first,
    cleared() {
      clears++;
      // What is armed may carry cleared events: the next build must replace or disarm it.
      covered = new Set();
      changed();
    },
    close() {
      closed = true;
      options.clearTimeout(timer);
      options.clearTimeout(refresh);
      timer = refresh = undefined;
    },
  };
}

/**
 * The `deferred-arm` message for the oldest of `items` that fit one server batch and `maxBytes`
 * as sent, or undefined when not even the oldest fits.
 */
async function bodyOf(
  items: readonly DeferredItem[],
  options: DeferredBodyOptions,
): Promise<{ message: Extract<DeferredMessage, { t: 'deferred-arm' }>; ids: Set<string> } | undefined> {
  const maxBytes = options.maxBytes ?? LIMITS.maxBeaconBytes;
  // The first body is built while the core holds its sends, so its cost is time in which an
  // unload can lose the events: each event's JSON is encoded once (docs/decisions.md, "Unload").
  const json = createJsonArrayBytes(64 * 1024);
  /** Where each event's JSON ends. */
  const ends: number[] = [];
  for (const item of items) {
    if (ends.length >= LIMITS.maxEventsPerBatch) break;
    const end = json.push(JSON.stringify(item.wire));
    // The array's bytes: its brackets, the events and the commas between them.
    if (end + 2 > LIMITS.maxBatchBodyBytes) break;
    ends.push(end);
  }
  let n = ends.length;
  while (n > 0) {
    const data = json.array(0, ends[n - 1]!);
    const body = options.compress === undefined ? data : await options.compress(data);
    if (body.length <= maxBytes) {
      const numbers: number[] = [];
      const ids = new Set<string>();
      for (let i = 0; i < n; i++) {
        const item = items[i]!;
        if (item.number !== undefined) numbers.push(item.number);
        if (item.wire.event_id != null) ids.add(item.wire.event_id);
      }
      const message = {
        t: 'deferred-arm' as const,
        url: deferredUrl(options.config, options.now(), options.compress !== undefined),
        body: exactBuffer(body),
        covered: toRanges(numbers),
        complete: n === items.length,
      };
      return { message, ids };
    }
    if (n === 1) return undefined;
    // Scaled by what the last try compressed to, with a margin; at least one fewer each round.
    n = Math.max(1, Math.min(n - 1, Math.floor(((n * maxBytes) / body.length) * 0.9)));
  }
  return undefined;
}

/** The beacon form's address: the batch endpoint with key, project, send time and encoding in the query. */
export function deferredUrl(config: DeferredBodyOptions['config'], sentAt: number, gzip: boolean): string {
  const query = new URLSearchParams({ api_key: config.apiKey, project_id: config.projectId, sent_at: new Date(sentAt).toISOString() });
  if (gzip) query.set('encoding', 'gzip');
  return `${config.endpoint}/api/v1/events/batch?${query.toString()}`;
}

/** An ArrayBuffer holding exactly `bytes`, to transfer. */
function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer as ArrayBuffer;
}
