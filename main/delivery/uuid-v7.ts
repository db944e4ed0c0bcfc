/**
 * Time-ordered UUIDv7 ids (RFC 9562 §5.7) at the cost of a counter: the clock gives each id as two
 * numbers, its millisecond and its counter, and the text is made where it is needed
 * (`protocol/event-model/event-id.ts`). Events carry the numbers to the worker, which makes the text there.
 *
 * Layout: 48-bit Unix ms timestamp | version 7 | 42-bit counter (12 bits of `rand_a`, then 30 of
 * `rand_b` after the variant) | 32 random bits fixed for the page. The counter follows RFC 9562
 * §6.2 method 1 (fixed-length dedicated counter): it starts at a random value below 2^41, so it
 * cannot overflow in practice, and it keeps counting across milliseconds, so ids from one clock
 * sort in creation order and no two share a counter. The per-page random part keeps two pages
 * apart; random bytes are drawn once, not per id, since an id is made on the main thread for every
 * event (docs/decisions.md, "UUIDv7 event ids"). The timestamp never goes backwards: a clock set
 * back reuses the last millisecond.
 */
import { formatEventId, hex } from '../../protocol/event-model/event-id.js';

const COUNTER_LIMIT = 2 ** 42;
/** The first millisecond a UUIDv7's 48 bits cannot hold (year 10889). */
const MS_LIMIT = 2 ** 48;

/** Options of {@link createUuidV7Clock}. */
export interface UuidV7Options {
  /** Fills an array with random bytes. @default `crypto.getRandomValues`, else `Math.random` */
  randomBytes?: (bytes: Uint8Array) => void;
  /** Start of the counter, for tests of its end. @default random below 2^41 */
  counterStart?: number;
}

/** The numbers of the ids of one page: {@link UuidV7Clock.tick} moves them to the next id. */
export interface UuidV7Clock {
  /** The last id's millisecond. */
  ms: number;
  /** The last id's counter. */
  counter: number;
  /** The page's fixed random part, 8 hex digits. */
  readonly tail: string;
  /** Moves to the next id, for an event made at `now` (ms); read {@link ms} and {@link counter} after. */
  tick(now: number): void;
}

/** Creates the id clock of one page. */
export function createUuidV7Clock(options: UuidV7Options = {}): UuidV7Clock {
  const seed = new Uint8Array(10);
  (options.randomBytes ?? defaultRandomBytes)(seed);
  // 32 bits fixed for the page (bytes 0–3), as 8 hex digits; the counter's start from bytes 4–9,
  // below 2^41: the leading zero bit is RFC 9562's rollover guard.
  let tail = '';
  let start = 0;
  seed.forEach((byte, i) => {
    if (i < 4) tail += hex(byte, 2);
    else start = start * 256 + (i === 4 ? byte & 1 : byte);
  });
  return {
    // Not below 0: a first reading that is NaN or negative gives the epoch, still a valid id.
    ms: 0,
    counter: options.counterStart ?? start,
    tail,
    tick(now) {
      let ms = Math.floor(now);
      // NaN, a repeated, a backwards or an impossible clock (Infinity, past 48 bits): keep the last
      // ms, so that one bad reading cannot fix every later id beyond what the worker accepts.
      if (!(ms > this.ms && ms < MS_LIMIT)) ms = this.ms;
      if (++this.counter >= COUNTER_LIMIT) {
        // Spent counter: borrow the next millisecond, as RFC 9562 §6.2 allows.
        this.counter = 0;
        ms = this.ms + 1;
      }
      this.ms = ms;
    },
  };
}

/** Id text from `clock`, one per call: for the ids other than events' (sessions, anonymous ids). */
export function createUuidV7Generator(clock: UuidV7Clock): (now: number) => string {
  return (now) => {
    clock.tick(now);
    return formatEventId(clock.ms, clock.counter, clock.tail);
  };
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
