/**
 * Time-ordered UUIDv7 ids (RFC 9562 §5.7) at the cost of a counter and a string.
 *
 * Layout: 48-bit Unix ms timestamp | version 7 | 42-bit counter (12 bits of `rand_a`, then 30 of
 * `rand_b` after the variant) | 32 random bits fixed for the page. The counter follows RFC 9562
 * §6.2 method 1 (fixed-length dedicated counter): it starts at a random value below 2^41, so it
 * cannot overflow in practice, and it keeps counting across milliseconds, so ids from one
 * generator sort in creation order. The per-page random part keeps two pages apart; random bytes
 * are drawn once, not per id (DESIGN.md "Measured facts": per-event work stays at a counter and a
 * string). The timestamp never goes backwards: a clock set back reuses the last millisecond.
 */

/** Makes one id per call; `now` is the event's timestamp in ms. */
export type IdGenerator = (now: number) => string;

const TWO_POW_16 = 0x1_0000;
const TWO_POW_30 = 0x4000_0000;
const COUNTER_LIMIT = 2 ** 42;

/** Options of {@link createUuidV7Generator}. */
export interface UuidV7Options {
  /** Fills an array with random bytes. @default `crypto.getRandomValues`, else `Math.random` */
  randomBytes?: (bytes: Uint8Array) => void;
  /** Start of the counter, for tests of its end. @default random below 2^41 */
  counterStart?: number;
}

/** Creates a generator of monotonic UUIDv7 strings. */
export function createUuidV7Generator(options: UuidV7Options = {}): IdGenerator {
  const seed = new Uint8Array(10);
  (options.randomBytes ?? defaultRandomBytes)(seed);
  // 32 bits fixed for the page, as 8 hex digits.
  const tail = hex(seed[0]! * 0x100_0000 + seed[1]! * 0x1_0000 + seed[2]! * 0x100 + seed[3]!, 8);
  // Counter start below 2^41: the leading zero bit is RFC 9562's rollover guard.
  let counter = options.counterStart ?? (seed[4]! & 0x01) * 2 ** 40 + seed[5]! * 2 ** 32 + ((seed[6]! << 24) >>> 0) + seed[7]! * 0x1_0000 + seed[8]! * 0x100 + seed[9]!;
  let lastMs = -1;
  let timeHex = '';

  return (now: number): string => {
    let ms = Math.floor(now);
    if (!(ms > lastMs)) ms = lastMs; // NaN, a repeated or a backwards clock: keep the last ms.
    counter++;
    if (counter >= COUNTER_LIMIT) {
      // Spent counter: borrow the next millisecond, as RFC 9562 §6.2 allows.
      counter = 0;
      ms = lastMs + 1;
    }
    if (ms !== lastMs) {
      lastMs = ms;
      const t = hex(ms, 12);
      timeHex = `${t.slice(0, 8)}-${t.slice(8)}-7`;
    }
    const high = Math.floor(counter / TWO_POW_30); // 12 bits → rand_a
    const mid = Math.floor(counter / TWO_POW_16) % 0x4000; // 14 bits after the variant
    const low = counter % TWO_POW_16; // 16 bits → start of the last group
    return `${timeHex}${hex(high, 3)}-${hex(0x8000 + mid, 4)}-${hex(low, 4)}${tail}`;
  };
}

/** `value` in lower-case hex, zero-padded to `digits`. */
function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

function defaultRandomBytes(bytes: Uint8Array): void {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c !== undefined && typeof c.getRandomValues === 'function') {
    c.getRandomValues(bytes);
    return;
  }
  // Without Web Crypto the ids stay unique within the page; Math.random keeps pages apart well enough.
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
}
