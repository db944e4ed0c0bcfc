/**
 * The text of an event id from its numbers. The facade makes an event's UUIDv7 as two numbers, its
 * millisecond and its counter (`main/delivery/uuid-v7.ts`), and posts them in the event columns with the
 * page's fixed random tail: making and posting an id then allocates nothing on the page's main
 * thread. The text is made here: by the facade on its rare paths (a beacon, an id given to
 * `onDiscard`), and by the core in the worker for every event, through the faster
 * `event-id-formatter.ts`.
 *
 * Layout (RFC 9562 §5.7): 48-bit Unix ms | version 7 | the counter's upper 12 bits (`rand_a`) |
 * variant `10` | its next 14 bits | its lower 16 bits, then the 32-bit tail (`rand_b`).
 */

const TWO_POW_16 = 0x1_0000;

/** `value` in lower-case hex, zero-padded to `digits`. */
export function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

/**
 * The id's text but for the counter's lower 16 bits and the tail, from `ms` and `upper` (the
 * counter / 2^16, rounded down): the same for 2^16 counter values.
 */
export function prefixOf(ms: number, upper: number): string {
  const t = hex(ms, 12);
  return `${t.slice(0, 8)}-${t.slice(8)}-7${hex(Math.floor(upper / 0x4000), 3)}-${hex(0x8000 + (upper % 0x4000), 4)}-`;
}

/**
 * The UUIDv7 of millisecond `ms`, 42-bit `counter` and `tail` (8 hex digits). For one id; a run of
 * ids is faster through `createEventIdFormatter` (`event-id-formatter.ts`).
 */
export function formatEventId(ms: number, counter: number, tail: string): string {
  const upper = Math.floor(counter / TWO_POW_16);
  return prefixOf(ms, upper) + hex(counter - upper * TWO_POW_16, 4) + tail;
}
