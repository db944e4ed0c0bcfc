import type { Timers } from '../protocol/worker/timers.js';

/**
 * When the delivery core sends: the flush-interval timer, the wake-up for the earliest retry, a
 * pause the server asked for (`Retry-After`), and whether the next sends may go below a full
 * batch ("draining": after the interval, a flush, page-hidden or a wake-up). It owns these timers
 * and nothing else; `wake` is the core's pump.
 */
export interface SendSchedule {
  /** Arms the flush-interval timer, if it is not armed and there is something queued. */
  armInterval(): void;
  /** Makes sure the core is woken at `at` (ms) at the latest. */
  wakeAt(at: number): void;
  /** Holds every send until `until` (ms): the server asked to wait. */
  pauseUntil(until: number): void;
  /** The time sending may resume, or undefined when `now` is not in a pause. */
  pausedAt(now: number): number | undefined;
  /** The next sends may go below a full batch, until nothing is left to take. */
  drain(): void;
  /** Fewest events a batch must have now: 1 while draining, else a full batch. */
  minimumBatch(batchSize: number): number;
  /** Nothing was left to take: back to full batches. */
  drained(): void;
  /** Clears every timer; nothing is armed after this. */
  close(): void;
}

/** What {@link createSendSchedule} needs. */
export interface SendScheduleDeps extends Timers {
  now: () => number;
  /** The flush interval, ms. */
  flushInterval: number;
  /** Called when a timer fires; the core sends what it can. */
  wake: () => void;
  /** Whether anything is queued: the interval timer runs only then. */
  hasQueued: () => boolean;
}

/** Creates the schedule of one delivery core. */
export function createSendSchedule(deps: SendScheduleDeps): SendSchedule {
  let intervalTimer: unknown;
  let wakeTimer: unknown;
  let wakeAt = Infinity;
  let pausedUntil = 0;
  let draining = false;
  let closed = false;

  const schedule: SendSchedule = {
    armInterval() {
      if (intervalTimer !== undefined || closed || !deps.hasQueued()) return;
      intervalTimer = deps.setTimeout(() => {
        intervalTimer = undefined;
        draining = true;
        deps.wake();
        schedule.armInterval();
      }, deps.flushInterval);
    },
    wakeAt(at) {
      if (at >= wakeAt || closed) return;
      if (wakeTimer !== undefined) deps.clearTimeout(wakeTimer);
      wakeAt = at;
      wakeTimer = deps.setTimeout(() => {
        wakeTimer = undefined;
        wakeAt = Infinity;
        draining = true;
        deps.wake();
      }, Math.max(0, at - deps.now()));
    },
    pauseUntil(until) {
      pausedUntil = Math.max(pausedUntil, until);
    },
    pausedAt(now) {
      return now < pausedUntil ? pausedUntil : undefined;
    },
    drain() {
      draining = true;
    },
    minimumBatch(batchSize) {
      return draining ? 1 : batchSize;
    },
    drained() {
      draining = false;
    },
    close() {
      closed = true;
      for (const timer of [intervalTimer, wakeTimer]) if (timer !== undefined) deps.clearTimeout(timer);
      intervalTimer = undefined;
      wakeTimer = undefined;
    },
  };
  return schedule;
}
