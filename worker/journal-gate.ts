/**
 * The delivery core's wait for its journal (`persistQueue`): events restored from IndexedDB go
 * first, so what arrives while the journal loads is held, then queued after them. Without a
 * journal the gate is open from the start. A `clearQueue()` while loading clears the held events
 * and drops what the journal returns.
 */
export interface JournalGate<T> {
  /** True until the journal has loaded (or its load gave up). */
  readonly loading: boolean;
  /** Holds a batch while loading and returns true; returns false when the gate is open. */
  hold(batch: T): boolean;
  /** Empties the gate for `clearQueue()`: returns what it held; the journal's events will be dropped. */
  clear(): T[];
}

/** What {@link createJournalGate} needs. */
export interface JournalGateDeps<E, T> {
  /** The journal's load, or undefined for no journal (the gate opens at once). */
  load: (() => Promise<E[]>) | undefined;
  /** Called once when loading ends: the restored events (none after a clear) and the held batches, in order. */
  opened: (restored: E[], held: T[]) => void;
}

/** Creates a gate, and starts loading when there is a journal. */
export function createJournalGate<E, T>(deps: JournalGateDeps<E, T>): JournalGate<T> {
  let loading = deps.load !== undefined;
  let held: T[] = [];
  let dropRestored = false;
  if (deps.load !== undefined) {
    void deps.load().then((restored) => {
      loading = false;
      const later = held;
      held = [];
      deps.opened(dropRestored ? [] : restored, later);
    });
  }
  return {
    get loading() {
      return loading;
    },
    hold(batch) {
      if (!loading) return false;
      held.push(batch);
      return true;
    },
    clear() {
      const out = held;
      held = [];
      dropRestored = loading;
      return out;
    },
  };
}
