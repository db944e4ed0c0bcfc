/** Error tracking: ErrorData fields, limits, and never reporting the library's own errors. */
import { afterEach, describe, expect, it } from 'vitest';
import { SILENT } from '../logger.js';
import { AnalyticsError } from '../errors.js';
import {
  MAX_ERRORS_PER_MINUTE,
  MAX_ERRORS_PER_PAGE,
  MAX_SAME_ERROR_PER_MINUTE,
  OWN_FILES,
  topFrame,
  trackErrors,
} from './error-tracking.js';
import { INTERNAL_ERROR, markInternal } from './internal-error.js';
import { createRemovers } from './removers.js';

const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

function start(ownFiles?: readonly string[]) {
  const sent: Array<Record<string, unknown>> = [];
  const clock = { t: 1_000_000 };
  stops.push(trackErrors(window, { send: (_name, p) => sent.push(p), now: () => clock.t, log: SILENT, ownFiles }));
  return { sent, clock };
}

function throwUncaught(message: string, init: ErrorEventInit = {}): void {
  window.dispatchEvent(new ErrorEvent('error', { message, error: new Error(message), ...init }));
}

function reject(reason: unknown): void {
  const event = new Event('unhandledrejection');
  Object.assign(event, { reason });
  window.dispatchEvent(event);
}

describe('trackErrors(win)', () => {
  it('sends uncaught errors with message, stack, filename, lineno, colno and type', () => {
    const { sent } = start();
    throwUncaught('Uncaught Error: exploded', { filename: 'https://app.test/x.js', lineno: 3, colno: 7 });
    expect(sent).toEqual([
      {
        message: 'Uncaught Error: exploded',
        stack: expect.stringContaining('exploded'),
        filename: 'https://app.test/x.js',
        lineno: 3,
        colno: 7,
        type: 'javascript',
      },
    ]);
  });

  it('sends unhandled rejections with the location of the top stack frame', () => {
    const { sent } = start();
    const error = new TypeError('no such thing');
    error.stack = 'TypeError: no such thing\n    at load (https://app.test/a.js:12:34)\n    at https://app.test/b.js:1:1';
    reject(error);
    reject('plain text');
    reject({ code: 42 });
    expect(sent).toEqual([
      { message: 'no such thing', stack: error.stack, filename: 'https://app.test/a.js', lineno: 12, colno: 34, type: 'unhandledrejection' },
      { message: 'plain text', stack: undefined, type: 'unhandledrejection' },
      { message: '{"code":42}', stack: undefined, type: 'unhandledrejection' },
    ]);
  });

  it(`sends the same error (message, file, line) at most ${MAX_SAME_ERROR_PER_MINUTE} times in any minute`, () => {
    const { sent, clock } = start();
    for (let i = 0; i < 10; i++) throwUncaught('again', { filename: 'https://app.test/x.js', lineno: 1 });
    throwUncaught('again', { filename: 'https://app.test/x.js', lineno: 2 });
    throwUncaught('other', { filename: 'https://app.test/x.js', lineno: 1 });
    expect(sent.map((e) => `${e.message}:${e.lineno}`)).toEqual(['again:1', 'again:1', 'again:1', 'again:2', 'other:1']);
    clock.t += 59_999;
    throwUncaught('again', { filename: 'https://app.test/x.js', lineno: 1 });
    expect(sent).toHaveLength(5);
    clock.t += 1;
    throwUncaught('again', { filename: 'https://app.test/x.js', lineno: 1 });
    expect(sent).toHaveLength(6);
  });

  it(`sends at most ${MAX_ERRORS_PER_MINUTE} errors in any minute, and ${MAX_ERRORS_PER_PAGE} per page`, () => {
    const { sent, clock } = start();
    for (let i = 0; i < MAX_ERRORS_PER_MINUTE + 10; i++) throwUncaught(`e${i}`);
    expect(sent).toHaveLength(MAX_ERRORS_PER_MINUTE);
    for (let minute = 1; minute < 10; minute++) {
      clock.t += 60_000;
      for (let i = 0; i < MAX_ERRORS_PER_MINUTE; i++) throwUncaught(`m${minute}e${i}`);
    }
    expect(sent).toHaveLength(MAX_ERRORS_PER_PAGE);
  });

  it('never reports the library itself: marked errors, AnalyticsErrors and errors from its own files', () => {
    const { sent } = start(['https://cdn.test/lib/auto-tracking-X.js']);
    window.dispatchEvent(new ErrorEvent('error', { message: 'ours', error: markInternal(new Error('ours')) }));
    reject(markInternal(new Error('ours too')));
    reject(new AnalyticsError('NETWORK_ERROR', 'flush() failed'));
    throwUncaught('from our chunk', { filename: 'https://cdn.test/lib/auto-tracking-X.js', lineno: 1, colno: 99 });
    const fromUs = new Error('thrown in our code');
    fromUs.stack = 'Error: thrown in our code\n    at f (https://cdn.test/lib/auto-tracking-X.js:1:500)\n    at https://app.test/main.js:9:9';
    reject(fromUs);
    throwUncaught('the app', { filename: 'https://app.test/main.js', lineno: 5 });
    expect(sent.map((e) => e.message)).toEqual(['the app']);
  });

  it("counts this module's own URL and the worker beside it as the library's files", () => {
    expect(OWN_FILES).toEqual([import.meta.url.replace('error-tracking.test.ts', 'error-tracking.ts'), import.meta.url.replace('error-tracking.test.ts', 'worker.js')]);
  });

  it('does not report an error thrown inside its own listener, nor let it reach the page', () => {
    const sent: unknown[] = [];
    let calls = 0;
    const seen: unknown[] = [];
    const onError = (event: ErrorEvent) => seen.push(event.error);
    window.addEventListener('error', onError);
    stops.push(() => window.removeEventListener('error', onError));
    stops.push(
      trackErrors(window, {
        send: (_name, p) => {
          calls++;
          if (calls === 1) throw new Error('send failed');
          sent.push(p);
        },
        now: () => 0,
        log: SILENT,
      }),
    );
    throwUncaught('first');
    throwUncaught('second');
    expect(sent).toEqual([expect.objectContaining({ message: 'second' })]);
    // Only the two app errors reached the page's own listener: ours was caught and marked.
    expect(seen.map((e) => (e as Error).message)).toEqual(['first', 'second']);
  });

  it('removes both listeners on stop', () => {
    const { sent } = start();
    stops.pop()!();
    throwUncaught('after stop');
    reject(new Error('after stop'));
    expect(sent).toEqual([]);
  });
});

describe('markInternal(error)', () => {
  it('marks with a shared Symbol.for key, so another copy of the library recognises it', () => {
    const error = markInternal(new Error('x'));
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for('service-analytics.internal-error')]).toBe(true);
    expect(INTERNAL_ERROR).toBe(Symbol.for('service-analytics.internal-error'));
    expect(Object.keys(error)).toEqual([]);
    expect(() => markInternal(Object.freeze(new Error('frozen')))).not.toThrow();
    expect(markInternal('text')).toBe('text');
  });

  it('is applied by a guarded callback to what it catches', () => {
    const logged: unknown[] = [];
    const r = createRemovers({ ...SILENT, error: (_m, detail) => logged.push(detail) }, 'test');
    const error = new Error('boom');
    expect(() =>
      r.guard(() => {
        throw error;
      })(),
    ).not.toThrow();
    expect(logged).toEqual([error]);
    expect((error as unknown as Record<symbol, unknown>)[INTERNAL_ERROR]).toBe(true);
  });
});

describe('topFrame(stack)', () => {
  it('reads V8, Gecko and WebKit frames and skips frames without a file', () => {
    expect(topFrame('Error: a\n    at f (https://x.test/a.js:1:2)')).toEqual({ filename: 'https://x.test/a.js', lineno: 1, colno: 2 });
    expect(topFrame('Error: a\n    at https://x.test/a.js?v=3:10:20')).toEqual({ filename: 'https://x.test/a.js?v=3', lineno: 10, colno: 20 });
    expect(topFrame('f@https://x.test/b.js:3:4\n@https://x.test/c.js:5:6')).toEqual({ filename: 'https://x.test/b.js', lineno: 3, colno: 4 });
    expect(topFrame('Error: a\n    at <anonymous>:1:5\n    at g (blob:https://x.test/1-2:7:8)')).toEqual({ filename: 'blob:https://x.test/1-2', lineno: 7, colno: 8 });
    expect(topFrame('Error: at 1:2:3')).toEqual({});
    expect(topFrame(undefined)).toEqual({});
  });
});
