import { afterEach, describe, expect, it, vi } from 'vitest';
import { NO_IDLE_CALLBACK_DELAY_MS, whenIdle } from './when-idle.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('whenIdle(win, task)', () => {
  it("uses the window's requestIdleCallback with a deadline, and cancels it", () => {
    const requestIdleCallback = vi.fn((_callback: () => void, _options?: { timeout: number }) => 42);
    const cancelIdleCallback = vi.fn();
    const win = { requestIdleCallback, cancelIdleCallback } as unknown as Window;
    const task = vi.fn();
    const cancel = whenIdle(win, task);
    expect(requestIdleCallback).toHaveBeenCalledWith(task, { timeout: 1_000 });
    cancel();
    expect(cancelIdleCallback).toHaveBeenCalledWith(42);
  });

  it('without requestIdleCallback (Safari), runs the task a moment later, unless cancelled', () => {
    vi.useFakeTimers();
    const win = { setTimeout: (f: () => void, ms: number) => setTimeout(f, ms), clearTimeout: (h: number) => clearTimeout(h) } as unknown as Window;
    const task = vi.fn();
    whenIdle(win, task);
    const cancelled = vi.fn();
    whenIdle(win, cancelled)();
    vi.advanceTimersByTime(NO_IDLE_CALLBACK_DELAY_MS - 1);
    expect(task).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
