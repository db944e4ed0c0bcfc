import { createHash, timingSafeEqual } from 'node:crypto';
import { randomId } from './ids.js';
import type { ApiKeyRecord, KeyKind } from './store/event-store.js';

const PREFIX: Record<KeyKind, string> = { write: 'sa_w_', read: 'sa_r_', admin: 'sa_a_' };

/** Hex SHA-256 of a key. Keys are 32 random base62 characters, so a fast hash is enough. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Makes a new key: the secret (shown once) and the record to store (hash only). */
export function generateKey(projectId: string, kind: KeyKind, now: number): { key: string; record: ApiKeyRecord } {
  const key = randomId(PREFIX[kind], 32);
  return {
    key,
    record: {
      id: randomId('key_', 16),
      projectId,
      kind,
      hash: hashKey(key),
      prefix: key.slice(0, 9),
      createdAt: now,
      revokedAt: null,
    },
  };
}

/** Compares two hex hashes in constant time. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
