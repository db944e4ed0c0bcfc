import { dayOf } from './rollup-schema.js';
import { type RefreshNext, dayKey } from './rollup-refresh.js';

/*
 * The background side of the daily rollups (docs/decisions.md, "Daily rollups"): every tick it
 * refreshes at most `daysPerTick` marked days, newest first, then waits for the next tick. Today
 * (and any later day) is not refreshed by default: nearly every group commit marks it again, so
 * under steady ingest its refresh (seconds of work for a large project) was almost always
 * computed in vain, and reports read it from the events anyway; a site quiet enough for the
 * refresh to hold is one whose day is cheap to read from the events. It is refreshed once it is
 * past. A past day is refreshed again at most once per `dayEveryMs`: late events (a backfill, an
 * offline queue, an import) mark their day at nearly every group commit, and refreshing it at
 * every tick rebuilt the whole day from its events again and again, which halved ingest
 * (bench/RESULTS.md, "Server ingest", the rows of a day before); meanwhile reports read that day
 * from the events, as they read today. A tick with no day to refresh takes turns of keeping
 * filtered top lists ahead (`filtered-ahead.ts`) for half a second at most, and none while a
 * report reads: that work waits for the rollups it reads, and leaves the cores to the reports. The
 * timer is unref'd: it never keeps a process alive; `stop()` waits for a tick in progress.
 */

/** Options of {@link startRollupRefresher}. */
export interface RollupRefresherOptions {
  refreshNext: RefreshNext;
  /** @default Date.now */
  now?: () => number;
  /**
   * Pause between ticks, ms.
   * @default 1000
   */
  tickMs?: number;
  /**
   * Days refreshed per tick at most, so that one tick holds the database (and, on SQLite, the
   * thread) for a bounded time.
   * @default 4
   */
  daysPerTick?: number;
  /**
   * How often the current UTC day is refreshed at most, ms; `Infinity`: only once it is past.
   * @default Infinity
   */
  todayEveryMs?: number;
  /**
   * How often one past day is refreshed at most, ms: a day refreshed (or found changed while it was
   * computed) waits this long before its next refresh. The first refresh of a day this process has
   * not refreshed yet is never held back.
   * @default 600000 (10 minutes)
   */
  dayEveryMs?: number;
  /**
   * One turn of keeping filtered top lists ahead (resolves false when nothing is left to do, or a
   * report is reading: the tick's turns end there); a tick that refreshed nothing takes turns for
   * up to `keepAheadMs`. @default none
   */
  keepAhead?: () => Promise<boolean>;
  /**
   * How long a tick takes turns of keeping ahead, ms, at most (a turn started is finished).
   * @default 500
   */
  keepAheadMs?: number;
  /** Told about a failed refresh or turn (the next tick tries again). @default ignore */
  onError?: (error: unknown) => void;
  /** @default (cb, ms) => setTimeout(cb, ms) */
  setTimer?: (callback: () => void, ms: number) => { unref?(): void };
  /** @default (timer) => clearTimeout(timer) */
  clearTimer?: (timer: unknown) => void;
}

/** A running refresher. */
export interface RollupRefresher {
  /** Stops the ticks; resolves when a tick in progress (a refresh, a turn of keeping ahead) has finished. */
  stop(): Promise<void>;
}

/** Starts refreshing marked days in the background. */
export function startRollupRefresher(options: RollupRefresherOptions): RollupRefresher {
  const now = options.now ?? (() => Date.now());
  const tickMs = options.tickMs ?? 1000;
  const daysPerTick = options.daysPerTick ?? 4;
  const keepAheadMs = options.keepAheadMs ?? 500;
  const todayEveryMs = options.todayEveryMs ?? Infinity;
  const dayEveryMs = options.dayEveryMs ?? 600_000;
  /** When each recently refreshed past day was refreshed, by {@link dayKey}. */
  const refreshedAt = new Map<string, number>();
  const setTimer = options.setTimer ?? ((callback, ms) => setTimeout(callback, ms));
  const clearTimer = options.clearTimer ?? ((timer) => clearTimeout(timer as ReturnType<typeof setTimeout>));
  let stopped = false;
  let timer: unknown = null;
  let running: Promise<void> | null = null;
  let todayRefreshedAt = -Infinity;

  const tick = async () => {
    let n = 0;
    for (; n < daysPerTick && !stopped; n++) {
      const time = now();
      const today = dayOf(time);
      // Past days first; today (and a clock-skewed later day) only when its pause is over.
      const todayDue = todayEveryMs !== Infinity && time - todayRefreshedAt >= todayEveryMs;
      const before = todayDue ? Number.MAX_SAFE_INTEGER : today;
      const resting: string[] = [];
      for (const [key, at] of refreshedAt) {
        if (time - at < dayEveryMs) resting.push(key);
        else refreshedAt.delete(key);
      }
      const refreshed = await options.refreshNext(before, resting);
      if (refreshed === null) break;
      if (refreshed.day >= today) todayRefreshedAt = time;
      else refreshedAt.set(dayKey(refreshed.projectId, refreshed.day), time);
    }
    if (n > 0 || options.keepAhead === undefined) return;
    const started = now();
    while (!stopped && (await options.keepAhead()) && now() - started < keepAheadMs);
  };

  const schedule = () => {
    if (stopped) return;
    const handle = setTimer(() => {
      running = tick()
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          running = null;
          schedule();
        });
    }, tickMs);
    handle.unref?.();
    timer = handle;
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer !== null) clearTimer(timer);
      await running;
    },
  };
}

/**
 * Refreshes every marked day now, today included; resolves with how many days it refreshed. A day
 * that changed while it was computed is tried again, up to `maxChanged` times in all (under
 * continuous writes to a day it would never end).
 */
export async function refreshAll(refreshNext: RefreshNext, maxChanged = 20): Promise<number> {
  let n = 0;
  let changed = 0;
  for (;;) {
    const refreshed = await refreshNext(Number.MAX_SAFE_INTEGER);
    if (refreshed === null) return n;
    if (refreshed.changed !== true) n++;
    else if (++changed > maxChanged) return n;
  }
}
