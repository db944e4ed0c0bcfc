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
  const HEX = Array.from({ length: 256 }, (_, byte) => hex(byte, 2));
  const seed = new Uint8Array(10);
  (options.randomBytes ?? defaultRandomBytes)(seed);
  // 32 bits fixed for the page (bytes 0–3), as 8 hex digits; the counter's start from bytes 4–9,
  // below 2^41: the leading zero bit is RFC 9562's rollover guard.
  let tail = '';
  let start = 0;
  seed.forEach((byte, i) => {
    if (i < 4) tail += HEX[byte];
    else start = start * 256 + (i === 4 ? byte & 1 : byte);
  });
  let counter = options.counterStart ?? start;
  let lastMs = -1;
  // Everything up to the last group's 4 counter digits, for this ms and counter / 2^16: per id,
  // only those 4 digits are new (two table lookups; no number formatting).
  let prefix = '';
  let prefixOf = -1;

  return (now: number): string => {
    let ms = Math.floor(now);
    if (!(ms > lastMs)) ms = lastMs; // NaN, a repeated or a backwards clock: keep the last ms.
    counter++;
    if (counter >= COUNTER_LIMIT) {
      // Spent counter: borrow the next millisecond, as RFC 9562 §6.2 allows.
      counter = 0;
      ms = lastMs + 1;
    }
    const upper = Math.floor(counter / TWO_POW_16); // 12 bits → rand_a, then 14 after the variant
    if (ms !== lastMs || upper !== prefixOf) {
      lastMs = ms;
      prefixOf = upper;
      const t = hex(ms, 12);
      prefix = `${t.slice(0, 8)}-${t.slice(8)}-7${hex(Math.floor(upper / 0x4000), 3)}-${hex(0x8000 + (upper % 0x4000), 4)}-`;
    }
    const low = counter - upper * TWO_POW_16; // 16 bits → start of the last group
    return prefix + HEX[low >> 8]! + HEX[low & 0xff]! + tail;
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
