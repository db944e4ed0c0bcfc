/**
 * The `persistQueue` journal (docs/decisions.md, "Durable queue (`persistQueue`)"). The core writes
 * every queue change through {@link QueueJournal}; on start it loads what an earlier page left
 * behind and sends it first. The journal never holds delivery state (retries, waits): after a crash
 * every journalled event simply starts over, and the server's event_id dedupe makes a resend of
 * something already stored harmless.
 */
import type { Timers } from '../protocol/worker/timers.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';
import type { QueueJournal } from '../protocol/worker/core-deps.js';


/** Options of {@link createIndexedDbJournal}. */
export interface IndexedDbJournalOptions {
  /** Database and lock name; one per project, e.g. `service-analytics-queue:<projectId>`. */
  name: string;
  log: (level: 'debug' | 'warn', message: string) => void;
  /** Runs a coalesced write on a later tick; @default `(cb) => setTimeout(cb, 0)` */
  schedule?: (callback: () => void) => void;
}

const STORE = 'events';

/**
 * An IndexedDB journal: one object store keyed by event id; every change of one tick goes into one
 * transaction. Only one tab writes: the one that gets the Web Lock named `options.name`
 * (`navigator.locks`, where it exists); the others keep their queue in memory only. After a quota
 * error the journal stops writing and the queue carries on in memory.
 *
 * Returns `undefined` where IndexedDB does not exist (Node, some private modes).
 */
export function createIndexedDbJournal(options: IndexedDbJournalOptions): QueueJournal | undefined {
  if (typeof indexedDB === 'undefined') return undefined;
  const { name, log } = options;
  const schedule = options.schedule ?? ((callback: () => void) => setTimeout(callback, 0));

  let releaseLock: () => void = () => {};
  const lock = new Promise<'held' | 'other-tab' | 'failed'>((resolve) => {
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
    // Without Web Locks there is no way to coordinate; writing beats not journalling at all.
    if (locks === undefined) return resolve('held');
    locks
      .request(name, { ifAvailable: true }, (granted) => {
        resolve(granted === null ? 'other-tab' : 'held');
        // Holding the callback's promise holds the lock, until close().
        return granted === null ? undefined : new Promise<void>((release) => (releaseLock = release));
      })
      .catch(() => resolve('failed'));
  });
  const database: Promise<IDBDatabase | undefined> = lock.then((state) => {
    if (state === 'other-tab') {
      log('debug', `another tab journals the queue "${name}"; this tab keeps its queue in memory only`);
      return undefined;
    }
    if (state === 'failed') {
      log('warn', `cannot take the Web Lock "${name}"; this tab keeps its queue in memory only`);
      return undefined;
    }
    return openDatabase(name).catch((error: unknown) => {
      log('warn', `cannot open the queue journal "${name}", keeping the queue in memory only: ${String(error)}`);
      return undefined;
    });
  });

  /** Pending writes of this tick: an event to put, or `null` to delete its id. */
  let pending = new Map<string, AnalyticsEvent | null>();
  let clearFirst = false;
  let scheduled = false;
  let disabled = false;
  let lastWrite: Promise<void> = Promise.resolve();

  function request(): void {
    if (disabled || scheduled) return;
    scheduled = true;
    schedule(() => void write());
  }

  function write(): Promise<void> {
    scheduled = false;
    const ops = pending;
    const clear = clearFirst;
    pending = new Map();
    clearFirst = false;
    if (ops.size === 0 && !clear) return lastWrite;
    lastWrite = lastWrite.then(async () => {
      const db = await database;
      if (db === undefined || disabled) return;
      await new Promise<void>((done) => {
        let tx: IDBTransaction;
        try {
          tx = db.transaction(STORE, 'readwrite');
        } catch (error) {
          // The connection was closed (versionchange, close()): the queue carries on in memory.
          log('warn', `the queue journal "${name}" is unavailable: ${String(error)}`);
          return done();
        }
        const store = tx.objectStore(STORE);
        if (clear) store.clear();
        for (const [id, event] of ops) {
          try {
            if (event === null) store.delete(id);
            else store.put(event);
          } catch (error) {
            // DataCloneError for an event that cannot be stored: skip it, keep the others.
            log('warn', `event ${id} cannot be journalled: ${String(error)}`);
          }
        }
        tx.oncomplete = () => done();
        tx.onabort = () => {
          const error = tx.error;
          if (error?.name === 'QuotaExceededError') {
            disabled = true;
            log('warn', `the queue journal "${name}" is out of quota; the queue continues in memory only`);
          } else {
            log('warn', `a write to the queue journal "${name}" failed: ${error?.message ?? 'aborted'}`);
          }
          done();
        };
      });
    });
    return lastWrite;
  }

  return {
    async load() {
      const db = await database;
      if (db === undefined) return [];
      const events = await new Promise<AnalyticsEvent[]>((resolve) => {
        let req: IDBRequest<unknown[]>;
        try {
          req = db.transaction(STORE, 'readonly').objectStore(STORE).getAll();
        } catch (error) {
          log('warn', `cannot read the queue journal "${name}": ${String(error)}`);
          return resolve([]);
        }
        req.onsuccess = () => resolve(req.result as AnalyticsEvent[]);
        req.onerror = () => {
          log('warn', `cannot read the queue journal "${name}": ${req.error?.message ?? 'unknown error'}`);
          resolve([]);
        };
      });
      // Keys are UUIDv7 (time-ordered) already; sorting also orders ids made some other way.
      return events.sort((a, b) => a.timestamp - b.timestamp);
    },
    append(events) {
      if (disabled) return;
      for (const event of events) pending.set(event.id, event);
      request();
    },
    remove(ids) {
      if (disabled) return;
      for (const id of ids) pending.set(id, null);
      request();
    },
    clear() {
      if (disabled) return;
      pending.clear();
      clearFirst = true;
      request();
    },
    async close() {
      await write();
      (await database)?.close();
      releaseLock();
    },
  };
}

/**
 * Loads `journal`, giving up after `timeoutMs` (with `[]`): sending must not wait on a database
 * that never answers. What a late load would have returned stays journalled for the next start.
 */
export function loadJournal(
  journal: QueueJournal,
  timeoutMs: number,
  timers: Timers,
  log: (level: 'warn', message: string) => void,
): Promise<AnalyticsEvent[]> {
  return new Promise((resolve) => {
    const timer = timers.setTimeout(() => {
      log('warn', `the queue journal did not load within ${timeoutMs} ms; sending without it`);
      resolve([]);
    }, timeoutMs);
    const done = (events: AnalyticsEvent[]) => {
      timers.clearTimeout(timer);
      resolve(events);
    };
    journal.load().then(done, (error: unknown) => {
      log('warn', `cannot load the queue journal: ${String(error)}`);
      done([]);
    });
  });
}

function openDatabase(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: 'id' });
    req.onsuccess = () => {
      const db = req.result;
      // A newer version opened elsewhere (a library update in another tab) must not be blocked.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    req.onerror = () => reject(req.error ?? new Error('indexedDB.open failed'));
  });
}
