/**
 * One started delivery core as the facade talks to it: a worker behind comlink and a
 * `MessagePort` (`worker-link.ts`), or the same core in-process (`in-process-link.ts`).
 */
import type { FlushResult, FromWorkerMessage, QueueStats, ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { Timers } from '../../protocol/worker/timers.js';

/** A running delivery core. */
export interface DeliveryLink {
  readonly mode: 'worker' | 'in-process';
  /**
   * Posts one data-plane message (one structured clone for a worker). For events, returns the
   * indices of those that could not be posted (a property structured clone refuses): the rest went
   * in parts.
   */
  post(message: ToWorkerMessage): number[];
  /**
   * `flush(upTo)` of the core. Rejects only when the core is gone (the facade then replays and
   * retries); a slow but live worker answers `{ ok: false, code: 'TIMEOUT' }`.
   */
  flush(upTo: number): Promise<FlushResult>;
  clear(): Promise<void>;
  stats(): Promise<QueueStats>;
  /** Lets the core send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
  /** Stops at once (terminates a worker). */
  close(): void;
  /** The time zone the core adds to events, for the facade's beacons (`WorkerHello.timezone`). */
  readonly timezone: string | undefined;
}

/** What a link reports to the facade. */
export interface LinkHandlers {
  /** A data-plane message from the core. */
  onMessage(message: FromWorkerMessage): void;
  /** The core died after a successful start (error event, or a control call timed out). */
  onDeath(reason: string): void;
}

/** The platform's timers, looked up when called, never captured at import (docs/architecture.md, "Conventions"). */
export const globalTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
