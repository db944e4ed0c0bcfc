/**
 * JSON texts encoded once, as UTF-8, one after another into one growing buffer, each followed by a
 * comma, so that any run of consecutive ones becomes the bytes of a JSON array by one copy. The
 * deferred body (`worker/deferred-body.ts`) and the pagehide beacon (`main/unload/beacon.ts`)
 * write their events this way: per event one `encodeInto` and no array of its own, and no joined
 * string encoded again for each body tried (docs/decisions.md, "Unload").
 */

/** The texts written so far; create one with {@link createJsonArrayBytes}. */
export interface JsonArrayBytes {
  /** Appends one JSON text; returns where its bytes end (the next text starts one byte later). */
  push(json: string): number;
  /** A new array of the bytes of `[`, the texts from `start` to `end` (offsets as {@link push} gives them), `]`. */
  array(start: number, end: number): Uint8Array;
}

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/** An empty buffer of `initialBytes`, grown by doubling as the texts need. */
export function createJsonArrayBytes(initialBytes = 16 * 1024): JsonArrayBytes {
  const encoder = new TextEncoder();
  let bytes = new Uint8Array(initialBytes);
  let length = 0;
  return {
    push(json) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit; 1 more for the comma.
      const room = length + json.length * 3 + 1;
      if (room > bytes.length) {
        const next = new Uint8Array(Math.max(room, bytes.length * 2));
        next.set(bytes.subarray(0, length));
        bytes = next;
      }
      const end = length + encoder.encodeInto(json, bytes.subarray(length)).written;
      bytes[end] = COMMA;
      length = end + 1;
      return end;
    },
    array(start, end) {
      const out = new Uint8Array(end - start + 2);
      out[0] = OPEN;
      out.set(bytes.subarray(start, end), 1);
      out[out.length - 1] = CLOSE;
      return out;
    },
  };
}
