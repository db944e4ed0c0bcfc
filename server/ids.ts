import { randomBytes } from 'node:crypto';

/**
 * A UUIDv7 (RFC 9562) for events that came without an `event_id`: time-ordered, so the dedupe
 * index grows at its end (docs/decisions.md, "UUIDv7 event ids").
 */
export function uuidV7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  const ms = BigInt(now);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A random identifier with a readable prefix, e.g. `proj_3kT9…`, in base62. */
export function randomId(prefix: string, length = 24): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  // 62 does not divide 256: reject bytes ≥ 248 so every character is equally likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += alphabet[byte % 62];
    }
  }
  return `${prefix}${out}`;
}
