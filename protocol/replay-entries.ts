/**
 * What the recorder's console and network capture put into a recording (docs/protocol.md,
 * "Console and network entries"): rrweb custom events (type 5) with a tag of ours, so they travel
 * in the recording chunks like every other recorded event and the server stores them unchanged.
 * The dashboard's player reads them back (types only: dashboard/ imports no runtime from here).
 *
 * An entry's event `timestamp` is when it happened (a console call; a request's start), so the
 * server's clock-skew correction moves it with the rest of the recording; durations are relative.
 * Entries are handed over when they are complete, so in a chunk they may stand after events that
 * are later in time: readers order by `timestamp`, as rrweb's player does.
 */

/** `data.tag` of a console entry. */
export const CONSOLE_ENTRY_TAG = 'service-analytics:console';
/** `data.tag` of a network entry. */
export const NETWORK_ENTRY_TAG = 'service-analytics:network';

/** The console methods the recorder can capture. `assert` is captured only when it fails. */
export type ConsoleLevel = 'log' | 'info' | 'warn' | 'error' | 'debug' | 'assert';

/** `data.payload` of a console entry. */
export interface ConsoleEntry {
  level: ConsoleLevel;
  /** The call's arguments formatted as one line of text (bounded in depth and length; masked). */
  message: string;
  /**
   * Stack frames: of an `Error` argument, or of the call itself for `error` and `assert`; without
   * the error's own message line. Absent otherwise.
   */
  stack?: string;
  /** `'uncaught'` for an error or a rejection nobody handled (reported as level `error`). */
  source?: 'console' | 'uncaught';
  /** Entries dropped just before this one by the per-second cap. */
  dropped?: number;
  /** True when `message` or `stack` was cut at the size cap. */
  truncated?: boolean;
}

/** How a request was made. */
export type NetworkInitiator = 'fetch' | 'xhr' | 'beacon';

/** Header names and values (lower-case names); a denied header's value is `[denied]`. */
export type CapturedHeaders = Record<string, string>;

/** `data.payload` of a network entry. */
export interface NetworkEntry {
  initiator: NetworkInitiator;
  /** Upper-case method. */
  method: string;
  /** Absolute URL without credentials and fragment; query values redacted unless allowed. */
  url: string;
  /** HTTP status; 0 when the request failed without an answer (network error, CORS, abort). */
  status: number;
  /** Why a request without an answer failed (`'aborted'`, `'network error'`, …). */
  error?: string;
  /** Milliseconds from the start to the answer (to its end where the browser's timing says so). */
  duration: number;
  /** Request body size in bytes when known. */
  requestSize?: number;
  /** Response body size in bytes when known (the encoded size where the browser reports it). */
  responseSize?: number;
  /** Only for allow-listed URLs with header capture on. */
  requestHeaders?: CapturedHeaders;
  responseHeaders?: CapturedHeaders;
  /** Only for allow-listed URLs with body capture on; bounded, masked. */
  requestBody?: string;
  responseBody?: string;
}
