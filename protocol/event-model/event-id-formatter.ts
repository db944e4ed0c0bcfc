/**
 * Event id text for many ids at once (`event-columns.ts` expands every post with it): a module of
 * its own so that the facade's bundle, which makes an id's text only on rare paths, does not carry
 * it.
 */
import { hex, prefixOf } from './event-id.js';

const TWO_POW_16 = 0x1_0000;

/**
 * `formatEventId` (`event-id.ts`) for many ids in creation order: the text up to the last 4
 * counter digits is made once per millisecond and per 2^16 counter values, and those 4 digits come
 * from a table.
 */
export function createEventIdFormatter(): (ms: number, counter: number, tail: string) => string {
  const HEX = Array.from({ length: 256 }, (_, byte) => hex(byte, 2));
  let lastMs = -1;
  let lastUpper = -1;
  let prefix = '';
  return (ms, counter, tail) => {
    const upper = Math.floor(counter / TWO_POW_16);
    if (ms !== lastMs || upper !== lastUpper) {
      lastMs = ms;
      lastUpper = upper;
      prefix = prefixOf(ms, upper);
    }
    const low = counter - upper * TWO_POW_16;
    return prefix + HEX[low >> 8]! + HEX[low & 0xff]! + tail;
  };
}
