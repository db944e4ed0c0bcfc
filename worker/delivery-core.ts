/**
 * The delivery core's driver: owns the timers, the requests and the journal around the pure
 * queue (`queue.ts`). The same code runs in the worker (`entry.ts`) and in-process on the main
 * thread (the facade's fallback), see DESIGN.md "The worker boundary".
 *
 * When events go out (SPEC.md "Queued event lifecycle", "queued → sending"):
 * - as soon as `batchSize` events are ready;
 * - every `flushInterval`, everything ready (armed only while the queue is not empty);
 * - on `flush(seq)` and `page-hidden`, everything queued, without waiting out backoff;
 * - a retried event when its wait is over.
 * At most {@link MAX_IN_FLIGHT} requests run at once: a 10,000-event burst drains as fast as the
 * server answers without opening hundreds of connections. A 429/503 with `Retry-After` pauses all
 * sending until then: rate limits apply to the project, not to one batch. Such a deferral does not
 * use up the batch's `retryAttempts` (`retry-policy.ts`).
 */
import type { BackendEvent } from '../protocol/backend-event.js';
import { type CoreDeps, defaultCoreDeps } from './core-deps.js';
import { expandColumns } from '../protocol/event-model/event-columns.js';
import { toBackendEvent } from '../protocol/event-model/event-mapping.js';
import { createFlushTracker, flushFailure } from './flush-tracker.js';
import { createOutbox } from './outbox.js';
import { createIndexedDbJournal, loadJournal } from './queue-journal.js';
import { type QueueEntry, createEventQueue } from './queue.js';
import { createRecordingUploader } from './recording-uploader.js';
import { toRanges } from './seq-ranges.js';
import { MAX_DEFERRAL_AGE_MS, isDeferral, nextDeferral, nextDelay } from './retry-policy.js';
import {
  REQUEST_TIMEOUT_MS,
  type SendOutcome,
  type SenderDeps,
  failureOf,
  sendBatch,
  sendRecordingChunk,
} from './sender.js';
import type { DeliveryConfig, DeliveryCore, DiscardReason, FlushResult } from './types.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';

export type { CoreDeps } from './core-deps.js';

/** Most batch requests outstanding at once. */
export const MAX_IN_FLIGHT = 4;

/** Retry waits are stretched by up to this fraction at random, so tabs do not retry in step. */
export const RETRY_JITTER = 0.1;

/** How long sending waits for the journal to load before it starts without it. */
export const JOURNAL_LOAD_TIMEOUT_MS = 5_000;

/**
 * Creates the delivery core.
 *
 * @param config - delivery settings with every default applied (SPEC.md "Configuration")
 * @param deps - injected clock, timers, fetch, gzip, journal; defaults in `core-deps.ts`
 * @param mode - reported in `stats()`; `'worker'` from `entry.ts`; @default 'in-process'
 */
export function createDeliveryCore(
  config: DeliveryConfig,
  deps: Partial<CoreDeps> = {},
  mode: 'worker' | 'in-process' = 'in-process',
): DeliveryCore {
  const d: CoreDeps = { ...defaultCoreDeps(), ...deps };
  const senderDeps: SenderDeps = {
    fetch: d.fetch,
    now: d.now,
    setTimeout: d.setTimeout,
    clearTimeout: d.clearTimeout,
    compress: config.compress ? d.compress : undefined,
    timeoutMs: d.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
  };
  const queue = createEventQueue(config.maxQueueSize);
  // Status posts are spaced out while a burst drains (outbox.ts); a settled flush, an empty queue
  // and a discard are reported at once.
  const flushes = createFlushTracker(() => outbox.statusChanged(undefined, true));
  const outbox = createOutbox(
    config.debug,
    () => ({ queueSize: queue.size, receivedSeq, recordingQueued: uploader.queued }),
    d,
  );
  const log = outbox.log;
  const uploader = createRecordingUploader({
    now: d.now,
    setTimeout: d.setTimeout,
    clearTimeout: d.clearTimeout,
    send: (sessionId, body) => sendRecordingChunk(sessionId, body, config, senderDeps),
    retry: config,
    log: (level, message) => log(level, message),
    onChange: () => statusChanged(),
  });

  let receivedSeq = 0;
  /**
   * The facade's number of each queued event it posted (worker/types.ts `ToWorkerMessage`), by id:
   * acks and discards are reported by number. By id, not by object, so that an event queued twice
   * (journalled, then replayed after a worker restart) is reported under the number it was
   * replayed with. Journal-restored events have none; the facade does not hold them.
   */
  const numbers = new Map<string, number>();
  let sent = 0;
  let discarded = 0;
  let inFlight = 0;
  let draining = false;
  let pausedUntil = 0;
  let closed = false;
  let intervalTimer: unknown;
  let wakeTimer: unknown;
  let wakeAt = Infinity;
  let idleWaiters: Array<() => void> = [];
  let shutdownPromise: Promise<void> | undefined;

  // persistQueue: journalled events are loaded first; sending waits for them (bounded).
  const journal = config.persistQueue
    ? (d.journal ?? createIndexedDbJournal({ name: `service-analytics-queue:${config.projectId}`, log: (l, m) => log(l, m) }))
    : undefined;
  if (config.persistQueue && journal === undefined) {
    // Deferred so that a listener added right after creation still hears it.
    queueMicrotask(() => log('debug', 'persistQueue: no IndexedDB here, the queue is kept in memory only'));
  }
  let loading = journal !== undefined;
  let held: AnalyticsEvent[][] = [];
  /** Set by clear() during loading: what the journal held was cleared too. */
  let dropLoaded = false;
  if (journal !== undefined) void loadJournal(journal, JOURNAL_LOAD_TIMEOUT_MS, d, log).then(finishLoading);

  /** The numbers of `ids` (forgotten: each event leaves the queue once). */
  function numbersOf(ids: readonly string[]): number[] {
    const out: number[] = [];
    for (const id of ids) {
      const n = numbers.get(id);
      if (n === undefined) continue;
      numbers.delete(id);
      out.push(n);
    }
    return out;
  }

  function statusChanged(acked?: readonly number[], immediate = false): void {
    checkIdle();
    outbox.statusChanged(acked, immediate || queue.size === 0);
  }

  function discard(events: readonly AnalyticsEvent[], reason: DiscardReason, detail: string): void {
    if (events.length === 0) return;
    const ids = events.map((e) => e.id);
    discarded += ids.length;
    if (reason !== 'cleared') journal?.remove(ids);
    flushes.left(ids);
    outbox.post({ t: 'discarded', ids, ranges: toRanges(numbersOf(ids)), reason, detail });
    log(reason === 'overflow' || reason === 'cleared' ? 'debug' : 'warn', `${ids.length} event(s) discarded (${reason}): ${detail}`);
    statusChanged(undefined, true);
  }

  function enqueue(events: readonly AnalyticsEvent[], journalled: boolean): void {
    const { added, dropped } = queue.enqueue(events);
    if (!journalled && added.length > 0) journal?.append(added);
    discard(dropped, 'overflow', `the queue holds at most ${config.maxQueueSize} events (maxQueueSize); the oldest were dropped`);
    armInterval();
    pump();
  }

  function armInterval(): void {
    if (intervalTimer !== undefined || queue.size === 0 || closed) return;
    intervalTimer = d.setTimeout(() => {
      intervalTimer = undefined;
      draining = true;
      pump();
      armInterval();
    }, config.flushInterval);
  }

  function wakeUpAt(at: number): void {
    if (at >= wakeAt || closed) return;
    if (wakeTimer !== undefined) d.clearTimeout(wakeTimer);
    wakeAt = at;
    wakeTimer = d.setTimeout(() => {
      wakeTimer = undefined;
      wakeAt = Infinity;
      draining = true;
      pump();
    }, Math.max(0, at - d.now()));
  }

  function pump(): void {
    if (closed || loading) return;
    const now = d.now();
    if (now < pausedUntil) return wakeUpAt(pausedUntil);
    while (inFlight < MAX_IN_FLIGHT) {
      const batch = queue.takeBatch(now, config.batchSize, draining ? 1 : config.batchSize);
      if (batch.length === 0) {
        draining = false;
        break;
      }
      send(batch);
    }
    const retryAt = queue.nextRetryAt(now);
    if (retryAt !== undefined) wakeUpAt(retryAt);
  }

  function send(batch: QueueEntry[]): void {
    const ids: string[] = [];
    const body: BackendEvent[] = [];
    let broken: string[] | undefined;
    for (const { event } of batch) {
      try {
        body.push(toBackendEvent(event));
        ids.push(event.id);
      } catch {
        // Only a malformed post (no context, say) gets here; it must not wedge the batch.
        (broken ??= []).push(event.id);
      }
    }
    if (broken !== undefined) discard(queue.reject(broken), 'rejected', 'malformed event: it cannot be mapped to a backend event');
    if (ids.length === 0) return;
    inFlight += 1;
    void sendBatch(body, config, senderDeps).then(
      (outcome) => settle(ids, outcome),
      (error: unknown) => settle(ids, { kind: 'network', timedOut: false, message: String(error) }),
    );
  }

  function settle(ids: string[], outcome: SendOutcome): void {
    inFlight -= 1;
    if (closed) return;
    if (outcome.kind === 'ok') {
      const refused = new Set<string>();
      for (const { index } of outcome.rejected) if (ids[index] !== undefined) refused.add(ids[index]);
      if (refused.size > 0) {
        const first = outcome.rejected[0];
        const detail = `the server refused ${refused.size} event(s) as invalid${first ? `, e.g. #${first.index}: ${first.error}` : ''}`;
        discard(queue.reject([...refused]), 'rejected', detail);
      }
      const acked = queue.ack(refused.size > 0 ? ids.filter((id) => !refused.has(id)) : ids);
      sent += acked.length;
      const ackedIds = acked.map((e) => e.id);
      journal?.remove(ackedIds);
      flushes.accepted(ackedIds);
      outbox.statusChanged(numbersOf(ackedIds), queue.size === 0);
    } else {
      const settleFlushes = flushes.failing(ids);
      if (outcome.kind === 'rejected') {
        // SPEC.md "Errors": any other 4xx is logged (by discard) and not retried: the same body
        // would never succeed.
        discard(queue.reject(ids), 'rejected', outcome.message);
      } else {
        const failure = failureOf(outcome);
        if (outcome.kind === 'retryable' && outcome.retryAfterMs !== undefined && (outcome.status === 429 || outcome.status === 503)) {
          pausedUntil = Math.max(pausedUntil, d.now() + outcome.retryAfterMs);
        }
        const now = d.now();
        const jitter = (wait: number | 'give-up'): number | 'give-up' =>
          wait === 'give-up' ? wait : wait + Math.floor(wait * RETRY_JITTER * d.random());
        if (isDeferral(failure)) {
          // The server asked to wait: no retry attempt is used up, or rate limiting would lose data.
          const result = queue.defer(ids, now, (deferral, createdAt) => jitter(nextDeferral(deferral, createdAt, now, failure, config)));
          log('debug', `batch of ${ids.length} deferred, ${result.requeued} re-queued: ${outcome.message}`);
          discard(result.discarded, 'retries-exhausted', `${outcome.message} (still deferred after ${MAX_DEFERRAL_AGE_MS / 3_600_000} h)`);
        } else {
          const result = queue.fail(ids, now, (attempt) => jitter(nextDelay(attempt, failure, config)));
          log('debug', `batch of ${ids.length} failed, ${result.requeued} re-queued: ${outcome.message}`);
          discard(result.discarded, 'retries-exhausted', `${outcome.message} (after ${config.retryAttempts} retries)`);
        }
      }
      settleFlushes(flushFailure(outcome), queue.size);
    }
    statusChanged();
    pump();
  }

  /** Journalled events go first, then what arrived while loading. */
  function finishLoading(loaded: AnalyticsEvent[]): void {
    if (closed) return;
    loading = false;
    if (loaded.length > 0 && !dropLoaded) {
      log('debug', `${loaded.length} event(s) restored from the queue journal`);
      enqueue(loaded, true);
    }
    const later = held;
    held = [];
    for (const events of later) enqueue(events, false);
    startFlushes();
    pump();
  }

  function startFlushes(): void {
    if (loading) return;
    const ids = flushes.start(receivedSeq, () => queue.ids());
    if (ids.length === 0) return;
    queue.expedite(ids);
    draining = true;
    pump();
  }

  function checkIdle(): void {
    if (idleWaiters.length === 0 || queue.size > 0 || inFlight > 0 || uploader.queued > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  return {
    receive(message) {
      if (closed) {
        log('warn', `"${message.t}" arrived after shutdown and was ignored`);
        return;
      }
      switch (message.t) {
        case 'events':
        case 'event-columns': {
          const events = message.t === 'events' ? message.events : expandColumns(message.columns);
          const first = message.seq - events.length;
          for (let i = 0; i < events.length; i++) numbers.set(events[i]!.id, first + i);
          receivedSeq = Math.max(receivedSeq, message.seq);
          if (loading) held.push(events);
          else enqueue(events, false);
          startFlushes();
          statusChanged();
          break;
        }
        case 'page-hidden':
          queue.expedite();
          draining = true;
          pump();
          uploader.uploadNow();
          break;
        default:
          uploader.receive(message);
      }
    },

    onMessage: outbox.subscribe,

    flush(seq) {
      if (closed) return Promise.resolve(shutDownResult());
      const result = flushes.add(seq);
      startFlushes();
      return result;
    },

    async clear() {
      const events = queue.clear();
      for (const batch of held) for (const event of batch) events.push(event);
      held = [];
      dropLoaded = loading;
      journal?.clear();
      discard(events, 'cleared', 'clearQueue()');
      statusChanged();
    },

    stats() {
      return { queueSize: queue.size, receivedSeq, recordingQueued: uploader.queued, sent, discarded, mode };
    },

    shutdown(timeoutMs) {
      shutdownPromise ??= (async () => {
        queue.expedite();
        draining = true;
        pump();
        uploader.uploadNow(true);
        await new Promise<void>((resolve) => {
          const timer = d.setTimeout(resolve, timeoutMs);
          idleWaiters.push(() => {
            d.clearTimeout(timer);
            resolve();
          });
          checkIdle();
        });
        closed = true;
        outbox.close();
        for (const timer of [intervalTimer, wakeTimer]) if (timer !== undefined) d.clearTimeout(timer);
        uploader.close();
        flushes.settleAll(shutDownResult());
        log('debug', `shut down with ${queue.size} event(s) still queued`);
        await journal?.close();
      })();
      return shutdownPromise;
    },
  };

  function shutDownResult(): FlushResult {
    return { ok: false, code: 'SHUT_DOWN', message: 'the delivery core has shut down', queued: queue.size };
  }
}
