/**
 * Operations served by a lazily loaded module but callable at once (the main-thread bundle has a
 * size budget: docs/architecture.md, "A size budget"). Loading starts when the client starts, or,
 * with `schedule`, when it says (the page idle) or at the first call, whichever comes first.
 *
 * - A call (an operation that returns nothing) made before the module arrives is queued, with a
 *   shallow copy of each object argument taken at the call, and replayed in call order when it
 *   arrives; while it is replayed, the module's clock ({@link DeferredModule.now}) answers the
 *   time of the call, so its events carry that time.
 * - A read (an operation that answers) made before the module arrives answers its fallback.
 * - If the module cannot be loaded, the queue is dropped and the debug log says so; later calls
 *   do nothing and reads answer their fallbacks.
 */
import type { Logger } from './logger.js';

/** Most calls queued while the module loads; beyond it the oldest is dropped. */
const MAX_QUEUED = 1000;

/** The operations of a module that may still be loading. */
export interface DeferredModule<T> {
  /** The calls and reads named at creation, forwarding to the module. */
  operations: T;
  /** Runs `use` at once when the module is loaded, else when it arrives; `at` is this call's time. */
  run(use: (module: T, at: number) => void): void;
  /** The module's clock: the time of the call being replayed, else now. */
  now(): number;
  /** Resolves once the calls queued so far were applied (or dropped); undefined when none wait. */
  settled(): Promise<void> | undefined;
}

/** Options of {@link createDeferredModule}. */
export interface DeferredModuleOptions<T> {
  /** Imports and creates the module, given its clock; undefined: the module is off (calls do nothing, reads answer fallbacks). */
  load: ((now: () => number) => Promise<T>) | undefined;
  /** Names of the operations that return nothing. */
  calls: readonly string[];
  /** Names of the operations that answer, with their answer until the module arrives (copied per read). */
  reads: Readonly<Record<string, unknown>>;
  now(): number;
  log: Logger;
  /** What the module serves, for the debug log. */
  name: string;
  /**
   * Calls `start` when loading should begin (e.g. `whenIdle`); a call, or `settled()` with calls
   * waiting, starts it sooner. @default at once
   */
  schedule?: (start: () => void) => void;
}

/** Starts loading the module and returns its operations. */
export function createDeferredModule<T>(options: DeferredModuleOptions<T>): DeferredModule<T> {
  const { now, log, name } = options;
  let module: T | undefined;
  let failed = options.load === undefined;
  let replaying: number | undefined;
  const queue: Array<[number, (module: T, at: number) => void]> = [];
  const clock = (): number => replaying ?? now();

  let arrived: Promise<void> | undefined;
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    arrived = options.load?.(clock).then(onArrival, onFailure);
  };
  function onArrival(loaded: T): void {
    module = loaded;
    for (const [at, use] of queue.splice(0)) {
      replaying = at;
      try {
        use(loaded, at);
      } catch (error) {
        log.error(`${name}: a call failed`, error);
      }
    }
    replaying = undefined;
  }
  function onFailure(error: unknown): void {
    failed = true;
    log.error(`${name} could not be loaded; ${queue.splice(0).length} calls dropped`, error);
  }
  if (options.schedule === undefined) start();
  else options.schedule(start);

  const run = (use: (module: T, at: number) => void): void => {
    if (module !== undefined) return use(module, now());
    if (failed) return;
    if (queue.push([now(), use]) > MAX_QUEUED) queue.shift();
    start();
  };
  type Operation = (...args: unknown[]) => unknown;
  const operations: Record<string, Operation> = {};
  for (const call of options.calls) {
    operations[call] = (...args) => {
      // Copies now: the app may change its object before the module arrives.
      const copies = args.map((arg) => (typeof arg === 'object' && arg !== null ? { ...arg } : arg));
      run((m) => (m[call as keyof T] as Operation)(...copies));
    };
  }
  for (const [read, fallback] of Object.entries(options.reads)) {
    operations[read] = (...args) =>
      module === undefined ? fallback && JSON.parse(JSON.stringify(fallback)) : ((module as T)[read as keyof T] as Operation)(...args);
  }
  return {
    operations: operations as unknown as T,
    run,
    now: clock,
    settled: () => (queue.length > 0 ? (start(), arrived) : undefined),
  };
}
