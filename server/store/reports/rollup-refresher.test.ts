import { describe, expect, it } from 'vitest';
import type { RefreshedDay } from './rollup-refresh.js';
import { refreshAll, startRollupRefresher } from './rollup-refresher.js';

const DAY = 86_400_000;

/** A manual timer: the test fires the pending callback. */
function manualTimer() {
  let pending: (() => void) | null = null;
  return {
    setTimer: (callback: () => void) => {
      pending = callback;
      return { unref() {} };
    },
    clearTimer: () => {
      pending = null;
    },
    fire: () => {
      const callback = pending;
      pending = null;
      callback?.();
    },
    get pending() {
      return pending !== null;
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('startRollupRefresher()', () => {
  it('takes turns of keeping filters ahead, for keepAheadMs at most, only in a tick that found no day to refresh', async () => {
    const marked = [19_999];
    const refreshNext = async (): Promise<RefreshedDay | null> => {
      const day = marked.shift();
      return day === undefined ? null : { projectId: 'p', day };
    };
    let now = 20_000 * DAY;
    let turns = 0;
    let more = true;
    // Each turn takes 200 ms.
    const keepAhead = async () => ((now += 200), turns++, more);
    const timer = manualTimer();
    const refresher = startRollupRefresher({ refreshNext, now: () => now, keepAhead, keepAheadMs: 500, ...timer });
    timer.fire();
    await settle();
    expect(turns).toBe(0);
    timer.fire();
    await settle();
    // 200, 400, 600 ms: the third turn ends the tick.
    expect(turns).toBe(3);
    marked.push(19_998);
    timer.fire();
    await settle();
    expect(turns).toBe(3);
    // Nothing left to keep: one turn, and the tick ends.
    more = false;
    timer.fire();
    await settle();
    expect(turns).toBe(4);
    await refresher.stop();
  });

  it('refreshes at most daysPerTick days a tick, and today at most once per todayEveryMs', async () => {
    const today = 20_000;
    let now = today * DAY + 5_000;
    const marked = [today, today - 1, today - 2, today - 3];
    const asked: number[] = [];
    const refreshNext = async (beforeDay: number): Promise<RefreshedDay | null> => {
      asked.push(beforeDay);
      const i = marked.findIndex((d) => d < beforeDay);
      if (i < 0) return null;
      const [day] = marked.splice(i, 1) as [number];
      return { projectId: 'p', day };
    };
    const timer = manualTimer();
    const refresher = startRollupRefresher({ refreshNext, now: () => now, daysPerTick: 2, todayEveryMs: 60_000, ...timer });
    timer.fire();
    await settle();
    // Today first (never refreshed yet), then only days before it.
    expect(asked).toEqual([Number.MAX_SAFE_INTEGER, today]);
    expect(marked).toEqual([today - 2, today - 3]);
    marked.unshift(today); // marked again by a commit
    now += 1000;
    timer.fire();
    await settle();
    expect(asked.slice(2)).toEqual([today, today]);
    expect(marked).toEqual([today]);
    now += 60_000;
    timer.fire();
    await settle();
    expect(marked).toEqual([]);
    await refresher.stop();
    expect(timer.pending).toBe(false);
  });

  it('by default leaves today to the events and refreshes it once it is past', async () => {
    const today = 20_000;
    let now = today * DAY + 5_000;
    const marked = [today, today - 1];
    const refreshNext = async (beforeDay: number): Promise<RefreshedDay | null> => {
      const i = marked.findIndex((d) => d < beforeDay);
      if (i < 0) return null;
      const [day] = marked.splice(i, 1) as [number];
      return { projectId: 'p', day };
    };
    const timer = manualTimer();
    const refresher = startRollupRefresher({ refreshNext, now: () => now, ...timer });
    for (let tick = 0; tick < 3; tick++) {
      timer.fire();
      await settle();
      now += 3_600_000;
    }
    expect(marked).toEqual([today]);
    now = (today + 1) * DAY + 1_000; // midnight passed: yesterday is a past day
    timer.fire();
    await settle();
    expect(marked).toEqual([]);
    await refresher.stop();
  });

  it('refreshes a past day again only once dayEveryMs has passed since its last refresh, other days meanwhile', async () => {
    const today = 20_000;
    let now = today * DAY + 5_000;
    const marked = new Set([today - 1, today - 2]);
    const skipped: string[][] = [];
    const refreshNext = async (beforeDay: number, skip: readonly string[] = []): Promise<RefreshedDay | null> => {
      skipped.push([...skip]);
      const day = [...marked].sort((a, b) => b - a).find((d) => d < beforeDay && !skip.includes(`p:${d}`));
      if (day === undefined) return null;
      marked.delete(day);
      return { projectId: 'p', day };
    };
    const timer = manualTimer();
    const refresher = startRollupRefresher({ refreshNext, now: () => now, daysPerTick: 1, dayEveryMs: 60_000, ...timer });
    timer.fire();
    await settle();
    expect(marked).toEqual(new Set([today - 2]));
    marked.add(today - 1); // late events mark it again at once
    now += 1_000;
    timer.fire();
    await settle();
    // The day just refreshed rests; the next one goes.
    expect(skipped.at(-1)).toEqual([`p:${today - 1}`]);
    expect(marked).toEqual(new Set([today - 1]));
    now += 1_000;
    timer.fire();
    await settle();
    expect(marked).toEqual(new Set([today - 1]));
    now += 60_000;
    timer.fire();
    await settle();
    expect(skipped.at(-1)).toEqual([]);
    expect(marked).toEqual(new Set());
    await refresher.stop();
  });

  it('reports a failed refresh and keeps ticking; stop() waits for a refresh in progress', async () => {
    const errors: unknown[] = [];
    let release: () => void = () => {};
    let calls = 0;
    const refreshNext = async (): Promise<RefreshedDay | null> => {
      calls++;
      if (calls === 1) throw new Error('busy');
      await new Promise<void>((resolve) => (release = resolve));
      return null;
    };
    const timer = manualTimer();
    const refresher = startRollupRefresher({ refreshNext, onError: (e) => errors.push(e), ...timer });
    timer.fire();
    await settle();
    expect(errors).toHaveLength(1);
    expect(timer.pending).toBe(true);
    timer.fire();
    await settle();
    let stopped = false;
    const stopping = refresher.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(timer.pending).toBe(false);
  });
});

describe('refreshAll()', () => {
  it('counts the days refreshed and gives up on a day that keeps changing', async () => {
    let n = 0;
    expect(await refreshAll(async () => (n++ < 3 ? { projectId: 'p', day: n } : null))).toBe(3);
    let tries = 0;
    expect(await refreshAll(async () => (tries++, { projectId: 'p', day: 1, changed: true }), 5)).toBe(0);
    expect(tries).toBe(6);
  });
});
