/**
 * `enableErrorTracking`: uncaught errors and unhandled promise rejections become `error` events
 * with the fields of ErrorData (message, stack, filename, lineno, colno, type; `main/types.ts`).
 *
 * Limits, so that a page failing in a loop cannot flood the queue:
 * - the same error (message, file and line) at most {@link MAX_SAME_ERROR_PER_MINUTE} times in
 *   any 60 s;
 * - all errors together at most {@link MAX_ERRORS_PER_MINUTE} in any 60 s, and
 *   {@link MAX_ERRORS_PER_PAGE} per client (page load).
 *
 * The library never reports itself (see `internal-error.ts`): errors marked as internal,
 * `AnalyticsError`s, errors thrown from the library's own script files (the chunk holding this
 * module, and `worker.js` beside it), and errors raised while an error is being reported are
 * skipped.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Logger } from '../logger.js';
import type { ErrorData } from '../types.js';
import { isInternal } from './internal-error.js';
import { createRateLimit } from './rate-limit.js';
import { createRemovers } from './removers.js';

/** Most `error` events for one error (same message, filename and line) in any 60 s. */
export const MAX_SAME_ERROR_PER_MINUTE = 3;
/** Most `error` events of all kinds in any 60 s. */
export const MAX_ERRORS_PER_MINUTE = 30;
/** Most `error` events per client (page load). */
export const MAX_ERRORS_PER_PAGE = 100;
/** Longest `message` sent (characters); longer ones are cut. */
export const MAX_MESSAGE_LENGTH = 1000;
/** Longest `stack` sent (characters); longer ones are cut. */
export const MAX_STACK_LENGTH = 4000;

/** Most distinct errors remembered for the per-error limit. */
const MAX_DISTINCT_ERRORS = 2 * MAX_ERRORS_PER_PAGE;

/**
 * URLs of the library's own script files: this module's (in the built library, the lazy chunk
 * of the automatic features) and the `worker.js` shipped beside it.
 */
export const OWN_FILES: readonly string[] = [import.meta.url, import.meta.url.replace(/[^/?#]*([?#].*)?$/, 'worker.js')];

/** What error tracking needs. */
export interface ErrorTrackingDeps {
  send: (name: 'error', properties: EventProperties) => void;
  now: () => number;
  log: Logger;
  /** Script URLs whose errors are the library's own. @default {@link OWN_FILES} */
  ownFiles?: readonly string[];
}

/** Starts error tracking on `win`; returns the remover. */
export function trackErrors(win: Window, deps: ErrorTrackingDeps): () => void {
  const r = createRemovers(deps.log, 'error tracking');
  const ownFiles = deps.ownFiles ?? OWN_FILES;
  const overall = createRateLimit(MAX_ERRORS_PER_MINUTE, 60_000, deps.now);
  const perError = new Map<string, () => boolean>();
  let total = 0;
  let reporting = false;

  const allow = (data: ErrorData): boolean => {
    const key = `${data.message}\n${data.filename}\n${data.lineno}`;
    let same = perError.get(key);
    if (same === undefined) {
      // Bounded memory: a page throwing ever new messages stops being tracked.
      if (perError.size >= MAX_DISTINCT_ERRORS) return false;
      perError.set(key, (same = createRateLimit(MAX_SAME_ERROR_PER_MINUTE, 60_000, deps.now)));
    }
    return total < MAX_ERRORS_PER_PAGE && same() && overall();
  };

  const report = (data: ErrorData, thrown: unknown): void => {
    if (reporting || isInternal(thrown) || fromOwnFile(data, ownFiles) || !allow(data)) return;
    total++;
    reporting = true;
    try {
      deps.send('error', data as unknown as EventProperties);
    } finally {
      reporting = false;
    }
  };

  r.listen(win, 'error', (event) => {
    const e = event as ErrorEvent;
    const details = describe(e.error);
    report(
      {
        message: cut(e.message || details.message, MAX_MESSAGE_LENGTH) || 'Script error',
        stack: details.stack,
        filename: e.filename || undefined,
        lineno: e.lineno || undefined,
        colno: e.colno || undefined,
        type: 'javascript',
      },
      e.error,
    );
  });
  r.listen(win, 'unhandledrejection', (event) => {
    const reason = (event as PromiseRejectionEvent).reason as unknown;
    const details = describe(reason);
    report({ message: details.message || 'Unhandled rejection', stack: details.stack, ...topFrame(details.stack), type: 'unhandledrejection' }, reason);
  });
  return r.stop;
}

/** Message and stack of a thrown value: an Error's own, or the value as text. */
function describe(value: unknown): { message: string; stack?: string } {
  if (typeof value === 'object' && value !== null) {
    const { message, stack } = value as { message?: unknown; stack?: unknown };
    if (typeof message === 'string') {
      return { message: cut(message, MAX_MESSAGE_LENGTH), stack: typeof stack === 'string' ? cut(stack, MAX_STACK_LENGTH) : undefined };
    }
  }
  let text: string | undefined;
  try {
    text = typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  } catch {
    // Cyclic or hostile: no text.
  }
  return { message: cut(text ?? '', MAX_MESSAGE_LENGTH) };
}

/**
 * The location of the first frame of a stack that names a script URL (or an absolute path), e.g.
 * from `    at f (https://app/x.js:10:5)` (V8) or `f@https://app/x.js:10:5` (Gecko, WebKit).
 */
export function topFrame(stack: string | undefined): Pick<ErrorData, 'filename' | 'lineno' | 'colno'> {
  const match = stack?.match(/(?:^|[\s(@])((?:(?:blob:)?[a-z][\w+.-]*:\/\/|\/)[^\s()]*?):(\d+):(\d+)\)?\s*$/m);
  return match === null || match === undefined ? {} : { filename: match[1], lineno: Number(match[2]), colno: Number(match[3]) };
}

function fromOwnFile(data: ErrorData, ownFiles: readonly string[]): boolean {
  const file = data.filename ?? topFrame(data.stack).filename;
  return file !== undefined && ownFiles.includes(file);
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}
