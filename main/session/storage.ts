/**
 * localStorage behind a narrow interface that never throws: private modes, disabled storage,
 * quota errors and server rendering all fall back to memory, so identity and sessions still work
 * for the life of the page.
 */

/** A string key/value store. */
export interface KeyValueStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  remove(key: string): void;
}

/** A {@link KeyValueStore} with a memory copy of what was set. */
export interface SafeStorage extends KeyValueStore {
  /**
   * Writes the memory copy to storage: what was set while storage was withheld (consent pending)
   * is stored once it is allowed (`optIn()`).
   */
  persistMemory(): void;
}

/**
 * Creates a store over `getStorage()` (called on each access, so storage that becomes available
 * or unavailable later is honoured) with a memory copy that answers when storage cannot.
 */
export function createSafeStorage(getStorage: () => Storage | undefined): SafeStorage {
  const memory = new Map<string, string>();
  const storage = (): Storage | undefined => {
    try {
      return getStorage();
    } catch {
      // Reading `window.localStorage` itself throws in some sandboxed iframes.
      return undefined;
    }
  };
  return {
    get(key) {
      try {
        const value = storage()?.getItem(key);
        if (value !== undefined && value !== null) return value;
      } catch {
        // Fall through to memory.
      }
      return memory.get(key) ?? null;
    },
    set(key, value) {
      memory.set(key, value);
      try {
        storage()?.setItem(key, value);
      } catch {
        // Quota exceeded or storage disabled: the memory copy stands in.
      }
    },
    persistMemory() {
      try {
        for (const [key, value] of memory) storage()?.setItem(key, value);
      } catch {
        // As in set().
      }
    },
    remove(key) {
      memory.delete(key);
      try {
        storage()?.removeItem(key);
      } catch {
        // As above.
      }
    },
  };
}

/** `window.localStorage` when there is one. */
export function browserLocalStorage(): Storage | undefined {
  return typeof localStorage === 'undefined' ? undefined : localStorage;
}
