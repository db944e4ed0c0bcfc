/**
 * Console capture: the page's `console` methods are wrapped so that each call is noted for the
 * recording (README "Session recording": console and network). The wrapper calls the original
 * first and then does the work of a counter and a reference: it checks the per-second cap and
 * keeps the call's arguments (and, for `error` and a failed `assert`, an `Error` for the call's
 * stack, whose text V8 formats only when read). Formatting and masking happen later, when the
 * capture's queue is drained (`page-context.ts`), never inside the page's call.
 *
 * Errors and promise rejections that nothing handled are noted the same way, as level `error`.
 * Every start has its stop: a wrapper still in place is taken out; one that another script has
 * wrapped since stays, passing calls through untouched.
 */
import type { ConsoleLevel } from '../../../protocol/replay-entries.js';
import type { ResolvedConsoleOptions } from './context-options.js';
import { createRateCap } from './rate-cap.js';

/** One console call as noted, before formatting. */
export interface RawConsoleCall {
  level: ConsoleLevel;
  args: readonly unknown[];
  /** When it happened (ms since the epoch). */
  at: number;
  /** An error whose stack is the call's, for `error` and `assert` without an `Error` argument. */
  site?: Error;
  source: 'console' | 'uncaught';
  /** Calls dropped by the cap just before this one. */
  dropped: number;
}

/** What the console capture needs from the page context. */
export interface ConsoleCaptureDeps {
  win: Window;
  now: () => number;
  /** Takes a noted call. */
  push(call: RawConsoleCall): void;
  /** True while the capture itself is formatting: calls made then are not noted (no loop). */
  busy(): boolean;
}

/** The prefix of the client's own debug messages (`main/logger.ts`): they are not the page's. */
const OWN_PREFIX = '[service-analytics]';

/** Starts console capture; returns its stop. */
export function startConsoleCapture(options: ResolvedConsoleOptions, deps: ConsoleCaptureDeps): () => void {
  const { win, now, push, busy } = deps;
  const console = (win as Window & typeof globalThis).console as unknown as Record<string, (...args: unknown[]) => void>;
  const cap = createRateCap(options.maxEntriesPerSecond, now);
  let active = true;
  const removers: Array<() => void> = [];

  const note = (level: ConsoleLevel, args: readonly unknown[], source: 'console' | 'uncaught', site?: Error): void => {
    if (!active || busy() || !cap.take()) return;
    push({ level, args, at: now(), site, source, dropped: cap.takeDropped() });
  };

  for (const level of options.levels) {
    const original = console[level];
    if (typeof original !== 'function') continue;
    const wrapper = function (this: unknown, ...args: unknown[]): void {
      original.apply(this, args);
      try {
        if (level === 'assert') {
          if (args[0]) return;
          args = args.slice(1);
        }
        if (typeof args[0] === 'string' && args[0].startsWith(OWN_PREFIX)) return;
        note(level, args, 'console', (level === 'error' || level === 'assert') && !args.some(isError) ? new Error() : undefined);
      } catch {
        // Noting a call must never break the page's own logging.
      }
    };
    console[level] = wrapper;
    removers.push(() => {
      if (console[level] === wrapper) console[level] = original;
    });
  }

  if (options.uncaught) {
    const onError = (event: ErrorEvent): void => note('error', [event.error ?? event.message], 'uncaught');
    const onRejection = (event: PromiseRejectionEvent): void => note('error', ['Unhandled rejection:', event.reason], 'uncaught');
    win.addEventListener('error', onError);
    win.addEventListener('unhandledrejection', onRejection);
    removers.push(() => {
      win.removeEventListener('error', onError);
      win.removeEventListener('unhandledrejection', onRejection);
    });
  }

  return () => {
    active = false;
    for (const remove of removers) remove();
  };
}

function isError(value: unknown): boolean {
  return value instanceof Error;
}
