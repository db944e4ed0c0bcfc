/**
 * One request of the page as the network capture notes it while it runs, before it becomes an
 * entry (`network-entry.ts`), and the hooks the fetch, XHR and beacon wrappers share. A wrapper
 * keeps references (the body, the response) and numbers (times, status); everything that reads or
 * formats them waits for the capture's queue to be drained.
 */
import type { NetworkInitiator } from '../../../protocol/replay-entries.js';

/** A request in flight or complete. */
export interface RawRequest {
  initiator: NetworkInitiator;
  method: string;
  /** The URL as the page gave it (may be relative). */
  url: string;
  /** Start, ms since the epoch (the entry's timestamp). */
  at: number;
  /** Start and answer on the page's monotonic clock (`performance.now()`), ms. */
  t0: number;
  t1: number;
  /** 0 until answered; stays 0 for a request without an answer and for a beacon. */
  status: number;
  error?: string;
  /** The request body as given (a reference: sizes, and text when allowed). */
  body?: unknown;
  /** Allow-listed for headers and bodies (`allowUrls`, with `recordHeaders` or `recordBodies`). */
  allowed: boolean;
  requestHeaders?: Array<[string, string]>;
  /** A fetch's answer: its headers are read when the entry is made. */
  response?: Response;
  /** An XHR: its answer's headers and text are read when the entry is made. */
  xhr?: XMLHttpRequest;
  responseBody?: string;
}

/** What the wrappers call. */
export interface RequestHooks {
  /** A request starts: a record to fill, or null when it is not recorded (own upload, over the cap, stopped). */
  begin(initiator: NetworkInitiator, method: string, url: string): RawRequest | null;
  /** The record is complete. */
  done(request: RawRequest): void;
  /** Record headers of allowed requests. */
  readonly recordHeaders: boolean;
  /** Record bodies of allowed requests, up to this many characters. */
  readonly recordBodies: boolean;
  readonly maxBodyLength: number;
  /** The page's monotonic clock, ms. */
  perfNow(): number;
}

/** Why a request that got no answer failed, from what the platform threw or fired. */
export function failureOf(cause: unknown): string {
  const name = typeof cause === 'object' && cause !== null ? (cause as { name?: unknown }).name : typeof cause === 'string' ? cause : undefined;
  if (name === 'AbortError' || name === 'abort') return 'aborted';
  if (name === 'TimeoutError' || name === 'timeout') return 'timeout';
  return 'network error';
}
