/**
 * Who the events are about: a persistent anonymous id and the optional user id. Both are read
 * from storage once, at start, and written only when they change, never per event.
 */
import type { KeyValueStore } from './storage.js';

/** The identity of the visitor. */
export interface Identity {
  /** The anonymous id, persisted across page loads. */
  anonymousId(): string;
  /** The user id, or null when none is set. */
  userId(): string | null;
  /** Sets (or with null, clears) the user id and persists it. */
  setUserId(userId: string | null): void;
  /** Clears the user id and issues a new anonymous id (for `reset()`). */
  reset(): void;
}

/** Options of {@link createIdentity}. */
export interface IdentityOptions {
  store: KeyValueStore;
  /** Prefix of the storage keys, per project, so two projects on one site do not share ids. */
  keyPrefix: string;
  /** Makes a new anonymous id. */
  newId: () => string;
  /** `AnalyticsConfig.userId`: wins over a stored user id. */
  initialUserId?: string;
}

/** Loads the identity from storage, creating an anonymous id when there is none. */
export function createIdentity(options: IdentityOptions): Identity {
  const { store, newId } = options;
  const anonKey = `${options.keyPrefix}anonymous_id`;
  const userKey = `${options.keyPrefix}user_id`;

  let anonymousId = store.get(anonKey) ?? '';
  if (anonymousId === '') {
    anonymousId = newId();
    store.set(anonKey, anonymousId);
  }
  let userId: string | null = store.get(userKey);
  if (typeof options.initialUserId === 'string' && options.initialUserId !== '') {
    userId = options.initialUserId;
    store.set(userKey, userId);
  }

  return {
    anonymousId: () => anonymousId,
    userId: () => userId,
    setUserId(next) {
      userId = next === null || next === '' ? null : String(next);
      if (userId === null) store.remove(userKey);
      else store.set(userKey, userId);
    },
    reset() {
      userId = null;
      store.remove(userKey);
      anonymousId = newId();
      store.set(anonKey, anonymousId);
    },
  };
}
