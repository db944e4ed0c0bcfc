/**
 * The delivery core's driver: owns the timers, the requests and the journal around the pure queue
 * (`queue.ts`). The same code runs in the worker (`entry.ts`) and in-process on the main thread
 * (the facade's fallback), see docs/architecture.md, "The worker boundary".
 *
 * When events go out (the "queued → sending" step of `queue.ts`; docs/protocol.md, "How the bundled
 * client uses the protocol"):
 * - as soon as `batchSize` events are ready;
 * - every `flushInterval`, everything ready (armed only while the queue is not empty);
 * - on `flush(upTo)` and `page-hidden`, everything queued, without waiting out backoff;
 * - a retried event when its wait is over.
 * At most {@link MAX_IN_FLIGHT} requests run at once: a 10,000-event burst drains as fast as the
 * server answers without opening hundreds of connections. A 429/503 with `Retry-After` pauses all
 * sending until then: rate limits apply to the project, not to one batch. Such a deferral does not
 * use up the batch's `retryAttempts` (`retry-policy.ts`).
 */
import type { BackendEvent } from '../protocol/wire-types.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';
import { expandColumns } from '../protocol/event-model/event-columns.js';
import { createEventIdFormatter } from '../protocol/event-model/event-id-formatter.js';
import { toBackendEvent } from '../protocol/event-model/event-mapping.js';
import { defaultCoreDeps } from './core-deps.js';
import type { CoreDeps } from '../protocol/worker/core-deps.js';
import { createDeferredBody } from './deferred-body.js';
import { createFlushTracker, flushFailure } from './flush-tracker.js';
import { createJournalGate } from './journal-gate.js';
import { createOutbox } from './outbox.js';
import { createIndexedDbJournal, loadJournal } from './queue-journal.js';
import { type QueueEntry, createEventQueue } from './queue.js';
import { createRecordingUploader } from './recording-uploader.js';
import { MAX_DEFERRAL_AGE_MS, judge, nextDeferral, nextDelay } from './retry-policy.js';
import { createSendSchedule } from './send-schedule.js';
import { REQUEST_TIMEOUT_MS, type SendOutcome, type SenderDeps, sendBatch, sendRecordingChunk } from './sender.js';
import { toRanges } from '../protocol/worker/number-ranges.js';
import type { DeliveryConfig, DeliveryCore, DiscardReason, DroppedIds, FlushResult } from '../protocol/worker/worker-contract.js';


/** Most batch requests outstanding at once. */
export const MAX_IN_FLIGHT = 4;

/** Retry waits are stretched by up to this fraction at random, so tabs do not retry in step. */
export const RETRY_JITTER = 0.1;

/** How long sending waits for the journal to load before it starts without it. */
export const JOURNAL_LOAD_TIMEOUT_MS = 5_000;

/**
 * What the queue holds of one event: its wire form, mapped once when the event is queued and sent
 * as it is on every attempt, and its number (its id's counter), by which acknowledgements and
 * discards are reported (protocol/worker/worker-contract.ts `ToWorkerMessage`). Journal-restored
 * events have none: this facade did not make them.
 */
interface QueuedItem {
  id: string;
  timestamp: number;
  number: number | undefined;
  wire: BackendEvent;
}

/** A batch that arrived while the journal was loading: the events and their numbers. */
interface HeldPost {
  events: AnalyticsEvent[];
  numbers: readonly number[];
}

/**
 * Creates the delivery core.
 *
 * @param config - delivery settings with every default applied (README, "Using the client library")
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
  // A replay after a worker restart re-sends events this core may still hold (journalled): they
  // are reported under their number from then on.
  const queue = createEventQueue<QueuedItem>(config.maxQueueSize, (kept, again) => {
    if (again.number === undefined) return;
    if (kept.number === undefined) restored--;
    kept.number = again.number;
  });
  // Status posts are spaced out while a burst drains (outbox.ts); a settled flush, an empty queue
  // and a discard are reported at once.
  const flushes = createFlushTracker(() => outbox.statusChanged(undefined, true));
  const outbox = createOutbox(
    config.debug,
    () => ({ recordingQueued: uploader.queued, restored }),
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
  // Only when the facade can arm a deferred request (a worker on a page with fetchLater): the
  // body of what the server has not acknowledged, rebuilt off the main thread when that changes.
  const deferred = config.deferredUnload === true
    ? createDeferredBody({
        config,
        now: d.now,
        setTimeout: d.setTimeout,
        clearTimeout: d.clearTimeout,
        compress: senderDeps.compress,
        items: () => queue.events(),
        post: (message) => outbox.post(message),
        log: (level, message) => log(level, message),
      })
    : undefined;
  const overflowDetail = `the queue holds at most ${config.maxQueueSize} events (maxQueueSize); the oldest were dropped`;
  const schedule = createSendSchedule({ ...d, flushInterval: config.flushInterval, wake: () => pump(), hasQueued: () => queue.size > 0 });

  // persistQueue: journalled events are loaded first; sending waits for them (bounded).
  const journal = config.persistQueue
    ? (d.journal ?? createIndexedDbJournal({ name: `service-analytics-queue:${config.projectId}`, log: (l, m) => log(l, m) }))
    : undefined;
  if (config.persistQueue && journal === undefined) {
    // Deferred so that a listener added right after creation still hears it.
    queueMicrotask(() => log('debug', 'persistQueue: no IndexedDB here, the queue is kept in memory only'));
  }
  const gate = createJournalGate<AnalyticsEvent, HeldPost>({
    load: journal === undefined ? undefined : () => loadJournal(journal, JOURNAL_LOAD_TIMEOUT_MS, d, log),
    opened(restored, held) {
      if (closed) return;
      if (restored.length > 0) {
        log('debug', `${restored.length} event(s) restored from the queue journal`);
        enqueue(restored, undefined, true);
        statusChanged(undefined, true);
      }
      for (const post of held) enqueue(post.events, post.numbers, false);
      startFlushes();
      pump();
    },
  });

  /** Events received from the facade (`QueueStats.receivedSeq`), and the highest number among them. */
  let received = 0;
  let highest = -1;
  /**
   * Queued events without a number: restored from the journal, which the facade does not hold; its
   * queue size adds them (`status`).
   */
  let restored = 0;
  let sent = 0;
  let discarded = 0;
  let inFlight = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];
  let shutdownPromise: Promise<void> | undefined;
  let stopWaitingForOnline: (() => void) | undefined;

  function statusChanged(acked?: readonly number[], immediate = false): void {
    checkIdle();
    outbox.statusChanged(acked, immediate || queue.size === 0);
  }

  function discard(items: ReadonlyArray<{ id: string; number?: number | undefined }>, reason: DiscardReason, detail: string): void {
    if (items.length === 0) return;
    const ids = items.map((item) => item.id);
    discarded += ids.length;
    deferred?.changed();
    if (reason !== 'cleared') journal?.remove(ids);
    flushes.left(ids);
    const numbers = numbersOf(items);
    restored -= items.length - numbers.length;
    outbox.post({ t: 'discarded', ids, ranges: toRanges(numbers), reason, detail });
    log(reason === 'overflow' || reason === 'cleared' ? 'debug' : 'warn', `${ids.length} event(s) discarded (${reason}): ${detail}`);
    statusChanged(undefined, true);
  }

  /**
   * Queues `events` under `numbers`, their ids' counters (undefined: restored from the journal).
   * Each is mapped to its wire form here, once; an event that cannot be mapped (only a malformed
   * post has one) is discarded rather than left to wedge a batch.
   */
  function enqueue(events: readonly AnalyticsEvent[], numbers: readonly number[] | undefined, journalled: boolean): void {
    const items: QueuedItem[] = [];
    let broken: Array<{ id: string; number: number | undefined }> | undefined;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const number = numbers?.[i];
      try {
        items.push({ id: event.id, timestamp: event.timestamp, number, wire: toBackendEvent(event, d.timezone()) });
      } catch {
        (broken ??= []).push({ id: event.id, number });
      }
    }
    if (broken !== undefined) {
      // Counted in, as they are counted out by the discard.
      for (const item of broken) if (item.number === undefined) restored++;
      discard(broken, 'rejected', 'malformed event: it cannot be mapped to a backend event');
    }
    const { added, dropped } = queue.enqueue(items);
    for (const item of added) if (item.number === undefined) restored++;
    if (added.length > 0) deferred?.changed();
    if (!journalled && added.length > 0 && journal !== undefined) {
      journal.append(added.length === events.length ? events : journalledOnly(events, added));
    }
    discard(dropped, 'overflow', overflowDetail);
    schedule.armInterval();
    const building = deferred?.firstArmed();
    if (building !== undefined) void building.then(pump, pump);
    else pump();
  }

  function pump(): void {
    if (closed || gate.loading) return;
    const now = d.now();
    const pausedUntil = schedule.pausedAt(now);
    if (pausedUntil !== undefined) return schedule.wakeAt(pausedUntil);
    while (inFlight < MAX_IN_FLIGHT) {
      const batch = queue.takeBatch(now, config.batchSize, schedule.minimumBatch(config.batchSize));
      if (batch.length === 0) {
        schedule.drained();
        break;
      }
      send(batch);
    }
    const retryAt = queue.nextRetryAt(now);
    if (retryAt !== undefined) schedule.wakeAt(retryAt);
  }

  function send(batch: ReadonlyArray<QueueEntry<QueuedItem>>): void {
    const ids = new Array<string>(batch.length);
    const body = new Array<BackendEvent>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i]!.event;
      ids[i] = item.id;
      body[i] = item.wire;
    }
    inFlight += 1;
    void sendBatch(body, config, senderDeps).then(
      (outcome) => settle(ids, outcome),
      (error: unknown) => settle(ids, { kind: 'failed', message: `sending a batch failed: ${String(error)}` }),
    );
  }

  function settle(ids: string[], outcome: SendOutcome): void {
    inFlight -= 1;
    if (closed) return;
    if (outcome.kind === 'ok') accepted(ids, outcome.rejected);
    else failed(ids, outcome);
    statusChanged();
    pump();
  }

  function accepted(ids: string[], rejected: ReadonlyArray<{ index: number; error: string }>): void {
    const refused = new Set<string>();
    for (const { index } of rejected) if (ids[index] !== undefined) refused.add(ids[index]);
    if (refused.size > 0) {
      const first = rejected[0];
      const detail = `the server refused ${refused.size} event(s) as invalid${first ? `, e.g. #${first.index}: ${first.error}` : ''}`;
      discard(queue.reject([...refused]), 'rejected', detail);
    }
    const acked = queue.ack(refused.size > 0 ? ids.filter((id) => !refused.has(id)) : ids);
    sent += acked.length;
    if (acked.length > 0) deferred?.changed();
    const ackedIds = acked.map((item) => item.id);
    journal?.remove(ackedIds);
    flushes.accepted(ackedIds);
    const numbers = numbersOf(acked);
    restored -= acked.length - numbers.length;
    outbox.statusChanged(numbers, queue.size === 0);
  }

  function failed(ids: string[], outcome: Exclude<SendOutcome, { kind: 'ok' }>): void {
    const settleFlushes = flushes.failing(ids);
    const verdict = judge(outcome);
    const now = d.now();
    const jitter = (wait: number | 'give-up'): number | 'give-up' =>
      wait === 'give-up' ? wait : wait + Math.floor(wait * RETRY_JITTER * d.random());
    switch (verdict.action) {
      case 'discard':
        // A 4xx is logged (by discard) and not retried: the same body would never succeed. Nor is
        // an error of our own: repeating it would only repeat it.
        if (outcome.kind === 'failed') log('error', outcome.message);
        discard(queue.reject(ids), 'rejected', outcome.message);
        break;
      case 'defer': {
        // The server asked to wait: no retry attempt is used up, or rate limiting would lose data.
        if (verdict.pauseMs !== undefined) schedule.pauseUntil(now + verdict.pauseMs);
        const result = queue.defer(ids, now, (deferral, createdAt) => jitter(nextDeferral(deferral, createdAt, now, verdict.failure, config)));
        log('debug', `batch of ${ids.length} deferred, ${result.requeued} re-queued: ${outcome.message}`);
        discard(result.discarded, 'retries-exhausted', `${outcome.message} (still deferred after ${MAX_DEFERRAL_AGE_MS / 3_600_000} h)`);
        break;
      }
      case 'retry': {
        if (verdict.failure.kind === 'network' && !d.online.isOnline()) {
          // The browser says it is offline: no attempt is used up; the events wait for `online`
          // (and give up only once a day old, as deferred ones do).
          const result = queue.defer(ids, now, (_deferral, createdAt) => (now - createdAt > MAX_DEFERRAL_AGE_MS ? 'give-up' : MAX_DEFERRAL_AGE_MS));
          resumeWhenOnline();
          log('debug', `offline: batch of ${ids.length} waits for the network, ${result.requeued} re-queued`);
          discard(result.discarded, 'retries-exhausted', `${outcome.message} (offline for ${MAX_DEFERRAL_AGE_MS / 3_600_000} h)`);
          break;
        }
        // discardAfterRetries: false keeps events whose retries are spent for the next flush trigger.
        const keep = !config.discardAfterRetries;
        const result = queue.fail(ids, now, (attempt) => {
          const wait = jitter(nextDelay(attempt, verdict.failure, config));
          return wait === 'give-up' && keep ? config.flushInterval : wait;
        });
        log('debug', `batch of ${ids.length} failed, ${result.requeued} re-queued: ${outcome.message}`);
        discard(result.discarded, 'retries-exhausted', `${outcome.message} (after ${config.retryAttempts} retries)`);
        break;
      }
    }
    settleFlushes(flushFailure(outcome), queue.size);
  }

  /** Sends what waited for the network as soon as the browser is back online. */
  function resumeWhenOnline(): void {
    stopWaitingForOnline ??= d.online.onOnline(() => {
      stopWaitingForOnline?.();
      stopWaitingForOnline = undefined;
      log('debug', 'online again: sending what waited');
      queue.expedite();
      schedule.drain();
      pump();
    });
  }

  function startFlushes(): void {
    if (gate.loading) return;
    const ids = flushes.start(highest, () => queue.ids());
    if (ids.length === 0) return;
    queue.expedite(ids);
    schedule.drain();
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
        case 'event-columns': {
          const { columns, dropped } = message;
          const events = expandColumns(columns);
          const numbers = columns.idCounters;
          received += events.length + (dropped?.idCounters.length ?? 0);
          highest = Math.max(highest, numbers[numbers.length - 1] ?? -1, dropped?.idCounters[dropped.idCounters.length - 1] ?? -1);
          if (dropped !== undefined) discard(droppedItems(dropped, columns.idTail), 'overflow', overflowDetail);
          if (!gate.hold({ events, numbers })) enqueue(events, numbers, false);
          startFlushes();
          statusChanged();
          break;
        }
        case 'page-hidden':
          queue.expedite();
          schedule.drain();
          pump();
          uploader.uploadNow();
          break;
        default:
          uploader.receive(message);
      }
    },

    onMessage: outbox.subscribe,

    flush(upTo) {
      if (closed) return Promise.resolve(shutDownResult());
      const result = flushes.add(upTo);
      startFlushes();
      return result;
    },

    async clear() {
      const items: Array<{ id: string; number: number | undefined }> = queue.clear();
      for (const post of gate.clear()) {
        post.events.forEach((event, i) => items.push({ id: event.id, number: post.numbers[i] }));
      }
      journal?.clear();
      deferred?.cleared();
      discard(items, 'cleared', 'clearQueue()');
      statusChanged();
    },

    stats() {
      return { queueSize: queue.size, receivedSeq: received, recordingQueued: uploader.queued, sent, discarded, mode };
    },

    timezone: () => d.timezone(),

    shutdown(timeoutMs) {
      shutdownPromise ??= (async () => {
        queue.expedite();
        schedule.drain();
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
        schedule.close();
        deferred?.close();
        stopWaitingForOnline?.();
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

/**
 * The events a facade dropped unposted (`DroppedIds`), as the items a discard reports: their ids
 * are made here, off the page's main thread.
 */
function droppedItems(dropped: DroppedIds, idTail: string): Array<{ id: string; number: number }> {
  const format = createEventIdFormatter();
  return dropped.idMs.map((ms, i) => ({ id: format(ms, dropped.idCounters[i]!, idTail), number: dropped.idCounters[i]! }));
}

/** The facade's numbers of `items`; restored events have none. */
function numbersOf(items: ReadonlyArray<{ number?: number | undefined }>): number[] {
  const out: number[] = [];
  for (const item of items) if (item.number !== undefined) out.push(item.number);
  return out;
}

/** The events of `events` that the queue took (`added`): the rest were already queued. */
function journalledOnly(events: readonly AnalyticsEvent[], added: readonly QueuedItem[]): AnalyticsEvent[] {
  const ids = new Set(added.map((item) => item.id));
  return events.filter((event) => ids.has(event.id));
}
