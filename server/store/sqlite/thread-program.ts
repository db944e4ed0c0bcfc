/**
 * What the SQLite store's threads (`sqlite-writer.ts`, `sqlite-reader.ts`,
 * `rollup-sqlite-thread.ts`) share: the prelude of their programs, which run from source text
 * (`new Worker(source, { eval: true })`: the same from the TypeScript sources under test, from a
 * bundle and from `dist/`), and their errors as data, which keep the message and SQLite's code
 * across the thread boundary (an Error object would lose the code).
 */

/** The start of every thread program: strict mode, its data and its port. */
export const THREAD_PRELUDE = `'use strict';
const { workerData, parentPort } = require('node:worker_threads');
`;

/** An error as it crosses from a thread: its message and SQLite's code (`SQLITE_BUSY`, …). */
export interface ThreadError {
  message: string;
  code?: string | undefined;
}

/**
 * Inside a thread: `error` as data. Self-contained, as the thread programs get it as source text
 * (`${toThreadError}`), not by import.
 */
export function toThreadError(error: unknown): ThreadError {
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { message: typeof message === 'string' ? message : String(error), code: typeof code === 'string' ? code : undefined };
}

/** On the request thread: the thread's error as an Error, its message after `what`, its code kept. */
export function fromThreadError(what: string, error: ThreadError): Error {
  return Object.assign(new Error(`${what}: ${error.message}`), error.code ? { code: error.code } : {});
}
