import { hashKey } from '../api-keys.js';

/**
 * The SHA-256 of write keys that recently checked out, by the key's own text, so that the ingest
 * path does not hash the same key on every request (about 2% of the server's CPU per request
 * under load; docs/decisions.md, "Key kinds and hashing").
 *
 * Only the hash is remembered, never a verdict: every request still looks its hash up in the
 * store's credential cache, which forgets a key the moment any process revokes or rotates it, so a
 * revoked key is refused at once exactly as before. Only keys that checked out are remembered, so
 * requests with made-up keys cannot fill it, and only write keys, which are public anyway (they
 * ship in the browser client); read keys are secrets and are never kept in memory as text.
 */
export interface KeyHashes {
  /** The hex SHA-256 of `key`: remembered when the key checked out before, computed otherwise. */
  hashOf(key: string): string;
  /** Notes that `key`, whose hash is `hash`, checked out. */
  remember(key: string, hash: string): void;
}

/** Past this many keys the memory starts afresh: a server sees a handful of write keys. */
const MAX_KEYS = 1_000;

/** A bounded memory of key hashes (see {@link KeyHashes}). */
export function createKeyHashes(maxKeys: number = MAX_KEYS): KeyHashes {
  const hashes = new Map<string, string>();
  return {
    hashOf(key) {
      return hashes.get(key) ?? hashKey(key);
    },
    remember(key, hash) {
      if (hashes.has(key)) return;
      if (hashes.size >= maxKeys) hashes.clear();
      hashes.set(key, hash);
    },
  };
}
