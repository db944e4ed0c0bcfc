/*
 * A mergeable distinct-count sketch (HyperLogLog with an exact small range) for the visitors and
 * sessions of the report aggregates (`aggregate-schema.ts`): one per aggregate row, merged with a
 * write batch's sketch on every commit and across many rows (say 90 days) when a report reads.
 *
 * Why this format: its bytes are those of PostgreSQL's `hll` extension (postgresql-hll, storage
 * schema version 1) with log2m 14, regwidth 5, expthresh 256 and sparse on, and its key hash is
 * the extension's `hll_hash_text`. So the same key set gives the same bytes here and in the
 * extension, and either side can merge sketches the other wrote: PostgreSQL merges them in SQL
 * with `hll_union_agg` where the extension is installed and with this code where it is not, and
 * every store estimates from the merged registers with this code, so the answers are the same.
 *
 * Why these parameters:
 * - Most rows count a handful of keys (a page with a few visitors that day), so a sketch stays an
 *   exact set of 64-bit hashes, 8 bytes a key, up to SKETCH_EXACT_UP_TO (256) keys. 256 keys is
 *   2,051 bytes, about where PostgreSQL starts moving a value out of line (TOAST, ~2 kB; hashes do
 *   not compress) and half a SQLite page; past it the sparse registers take under a third of that.
 * - Past 256 keys it is a HyperLogLog of 2^14 = 16,384 registers (relative standard error
 *   1.04/√16384 ≈ 0.81%), estimated with Ertl's improved raw estimator (O. Ertl, "New cardinality
 *   estimation algorithms for HyperLogLog sketches", 2017, algorithm 6), which has no bias bump
 *   between the small range and the large one and needs no empirical bias tables (the
 *   extension's own `hll_cardinality` switches to linear counting and has one; it is not used).
 * - Stored, the registers take the sparse form while it is smaller than the full one (10 KB).
 *   Which one is a function of the registers alone, and the exact set is a function of the keys
 *   alone, so equal key sets give equal bytes whatever the order of insertion or merging.
 *
 * Stored format (the extension's; multi-byte integers big-endian, bit fields packed most
 * significant bit first into consecutive bytes, the last byte zero-padded with fewer than 8 bits):
 *   byte 0   schema version 1 in the high 4 bits, type in the low 4: 1 empty, 2 explicit,
 *            3 sparse, 4 full (0x11 … 0x14)
 *   byte 1   0x8e: (register width 5 − 1) << 5 | log2m 14
 *   byte 2   0x49: sparse on (1 << 6) | expthresh 256 encoded as log2(256) + 1 = 9
 *   empty    nothing more: the empty sketch is the 3 bytes 11 8e 49.
 *   explicit n × 8 bytes, 1 ≤ n ≤ 256: the distinct 64-bit hashes, strictly ascending as signed
 *            64-bit integers.
 *   sparse   the non-zero registers in ascending index order, each 19 bits: index << 5 | value.
 *            Used while (non-zero registers) × 19 < 16,384 × 5 bits, i.e. up to 4,311 of them.
 *   full     16,384 registers × 5 bits = 10,240 bytes, register 0 first.
 * A key's hash is `hashKey` (below: MurmurHash3 x64 128, seed 0, first 64-bit word, over the
 * key's UTF-8 bytes). A hash's register: index = its low 14 bits; value = (number of trailing zero
 * bits of the hash shifted right by 14, a 50-bit number) + 1, at most 31, or 0 when that number
 * is 0. A register keeps the largest value of its hashes. Adding a 257th distinct hash to an
 * explicit set, or a union of more than 256, turns it into the registers of all of them.
 *
 * Everything lives inside `createSketchKit`, which uses nothing from outside its own body, so the
 * SQLite writer thread, which runs its program from source text, can build the same kit from
 * `createSketchKit.toString()`. The module's exports are one kit's members.
 */

/** A 64-bit hash of a key as two unsigned 32-bit halves. */
export interface KeyHash {
  hi: number;
  lo: number;
}

/** A mutable sketch (see the file's top comment for what it holds and how it is stored). */
export interface VisitorSketch {
  /** Adds one key's hash (from {@link hashKey}). */
  add(hash: KeyHash): void;
  /** Union in place (register-wise max / set union); returns this. */
  merge(other: VisitorSketch): this;
  /**
   * Merges stored bytes without materializing another sketch: the hot path when a report reads
   * many rows. Throws (leaving this sketch unchanged) on bytes that are not a sketch.
   */
  mergeBytes(bytes: Uint8Array): this;
  /** The estimated distinct count: exact (the number of distinct hashes) while the sketch is explicit. */
  estimate(): number;
  /** The stored form: the same key set gives the same bytes, whatever the order of adds and merges. */
  toBytes(): Uint8Array;
}

/** The static side of {@link VisitorSketch}. */
export interface VisitorSketchClass {
  /** A sketch of no keys. */
  empty(): VisitorSketch;
  /** Reads stored bytes; throws a clear Error on bytes that are not a sketch of this format and version. */
  fromBytes(bytes: Uint8Array): VisitorSketch;
}

/** Everything the sketch offers, as one value: what a thread that gets its program as source text receives. */
export interface SketchKit {
  hashKey(key: string): KeyHash;
  VisitorSketch: VisitorSketchClass;
  unionSketchBytes(a: Uint8Array | null, b: Uint8Array | null): Uint8Array;
  estimateSketchBytes(bytes: Uint8Array | null): number;
  /** Up to this many distinct keys a sketch is explicit and its count exact. */
  exactUpTo: number;
  /**
   * The HyperLogLog estimate of a sketch's keys even while it is explicit (what it would estimate
   * without the exact range). For the accuracy script and tests, not for reports.
   */
  registerEstimate(sketch: VisitorSketch): number;
  /**
   * The union of `finer` (stored sketches; null for none, and null when all are), given
   * `previous`, their union before some keys were taken out of them, and `erased`, sketches
   * holding at least those keys. Byte for byte the union of `finer`, at the cost of reading only
   * the registers the erased keys hash to (no other register of a finer sketch can have changed),
   * where the whole union decodes every register of every finer sketch: what an erasure's day and
   * week rows are merged again with. Throws on bytes whose header is not a sketch's (a sparse finer
   * sketch is read at the registers it needs, not decoded and checked whole).
   */
  unionWithout(previous: Uint8Array | null, finer: ReadonlyArray<Uint8Array | null>, erased: ReadonlyArray<Uint8Array | null>): Uint8Array | null;
  /**
   * A sketch of keys with some taken out, from `previous` (its stored bytes; null for none), the
   * sketches `erased` (holding at least the keys taken out), and `kept`: a sketch of the keys left
   * whose registers ({@link SketchKit.registerOfKey}) the erased keys set, and maybe of others.
   * Byte for byte the sketch of the keys left, without them all: an exact set loses the erased
   * hashes no kept key has; registers are patched where the erased keys set them, as
   * {@link SketchKit.unionWithout} does. Undefined where that cannot be told from these: the keys
   * left might be few enough for an exact set (no more set registers than {@link SketchKit.exactUpTo}),
   * or `erased` or `kept` is not of the form it can be. What an erasure's hour rows are patched with.
   */
  withoutKeys(previous: Uint8Array | null, kept: Uint8Array | null, erased: ReadonlyArray<Uint8Array | null>): Uint8Array | null | undefined;
  /** The register a key's hash sets (its low log2m bits): a number below {@link SketchKit.registers}. */
  registerOfKey(key: string): number;
  /** How many registers a sketch has (2^log2m): a register index, as SQL, is the hash's low bits masked by this less one. */
  registers: number;
}

/**
 * Builds the sketch's functions. Self-contained (nothing from outside its body), so that a thread
 * can run `(${createSketchKit.toString()})()` and get a kit whose bytes match this module's.
 */
export function createSketchKit(): SketchKit {
  const TYPE_EMPTY = 1;
  const TYPE_EXPLICIT = 2;
  const TYPE_SPARSE = 3;
  const TYPE_FULL = 4;
  const HEADER = 3;
  /** Header byte 1: (register width 5 − 1) << 5 | log2m 14. */
  const PARAMS = 0x8e;
  /** Header byte 2: sparse on << 6 | expthresh 256 encoded as log2(256) + 1. */
  const THRESHOLD = 0x49;
  const LOG2M = 14;
  const M = 1 << LOG2M;
  const INDEX_MASK = M - 1;
  /** Registers also travel four to a 32-bit word in memory (SWAR max). */
  const GROUPS = M / 4;
  const WIDTH = 5;
  const MAX_VALUE = (1 << WIDTH) - 1;
  /** Ertl's q: register values are 0 … q + 1, and q + 1 = 31 means "31 or more" (a 5-bit register saturates). */
  const Q = MAX_VALUE - 1;
  /** A sparse entry: index << 5 | value. */
  const ENTRY_BITS = LOG2M + WIDTH;
  const ENTRY_MASK = (1 << ENTRY_BITS) - 1;
  /** Sparse while its bits are fewer than the full form's: (non-zero registers) × 19 < 16,384 × 5. */
  const SPARSE_MAX = Math.ceil((M * WIDTH) / ENTRY_BITS) - 1;
  const EXACT_UP_TO = 256;
  const FULL_LENGTH = HEADER + (M * WIDTH) / 8;
  const EXPLICIT_MAX_LENGTH = HEADER + 8 * EXACT_UP_TO;
  /** A sparse value of every register (another writer may keep the sparse form longer). */
  const SPARSE_MAX_LENGTH = HEADER + Math.ceil((M * ENTRY_BITS) / 8);
  /** Slots of a new explicit table (16 keys before it grows): most sketches hold a few keys. */
  const FIRST_SLOTS = 32;
  const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  const HI_WORD = LITTLE_ENDIAN ? 1 : 0;
  const LO_WORD = 1 - HI_WORD;

  // Scratch space, reused rather than allocated per call: a kit's functions never run
  // concurrently (one thread), and none keeps scratch across calls (`touchedMark` is all zero
  // between calls).
  /** Unpacked full registers, one a byte, with a word view for the SWAR max. */
  const regsA = new Uint8Array(M);
  const regsA32 = new Uint32Array(regsA.buffer);
  const regsB = new Uint8Array(M);
  const regsB32 = new Uint32Array(regsB.buffer);
  /** Registers an erasure may have changed (`unionWithout`, `withoutKeys`): a mark per register, and their list. */
  const touchedMark = new Uint8Array(M);
  const touchedList = new Int32Array(M);
  const touchedValue = new Uint8Array(M);
  /** Register lists: sparse entries (`index << 5 | value`), ascending, one per non-zero register. */
  const listA = new Int32Array(M);
  const listB = new Int32Array(M);
  const listC = new Int32Array(M);
  /** Sorts explicit hashes as signed 64-bit integers, written and read as 32-bit halves only, so no BigInt is made. */
  const sortKeys = new BigInt64Array(EXACT_UP_TO);
  const sortWords = new Uint32Array(sortKeys.buffer);
  /** Eight interleaved histograms: consecutive increments of one counter would stall on each other. */
  const lanes = new Int32Array(8 * 32);
  const histogram = new Float64Array(32);
  /** The union of two explicit sketches, copied out at its length. */
  const explicitOut = new Uint8Array(EXPLICIT_MAX_LENGTH);
  /** A key's UTF-8 bytes (grown for long keys). */
  let utf8 = new Uint8Array(256);
  const encoder = new TextEncoder();
  const EMPTY = Uint8Array.of(0x10 | TYPE_EMPTY, PARAMS, THRESHOLD);

  function fail(problem: string): never {
    throw new Error(`Not a visitor sketch (hll storage format, log2m 14, regwidth 5, expthresh 256, sparse on): ${problem}.`);
  }

  /*
   * MurmurHash3 x64 128 on 64-bit integers held as (hi, lo) 32-bit halves. A product by a
   * constant c = (ch, cl) is lo' = imul(lo, cl), hi' = high32(lo × cl) + imul(hi, cl) +
   * imul(lo, ch) mod 2^32, the high word summed from products of 16-bit halves. All of it is
   * written out in one function body, in 32-bit integer operations only: helpers that V8 does not
   * inline would box every integer past 2^30 they take or return, and doubles past 2^31 take a
   * slow conversion back to integers. Measured: the same hash with the product and the block mix
   * as two helpers that leave their result in closure variables took 300 ns a 36-character key
   * against 190 written out (best of 15 rounds of 20,000 keys, Node 20).
   */
  /** The key's UTF-8 bytes into `utf8` (a lone surrogate as U+FFFD, as every UTF-8 encoder of a JS string writes it); returns their number. */
  function encodeUtf8(key: string): number {
    const n = key.length;
    if (3 * n + 16 > utf8.length) utf8 = new Uint8Array(3 * n + 64);
    // ASCII (ids nearly always are) byte by byte: cheaper than the encoder's call for short keys.
    const out = utf8;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) return encoder.encodeInto(key, out).written;
      out[i] = c;
    }
    return n;
  }

  /** Little-endian 32-bit word of `bytes` at `at`. */
  function le32(bytes: Uint8Array, at: number): number {
    return (bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24);
  }

  /**
   * The extension's `hll_hash_text`: the first 64-bit word of MurmurHash3 x64 128 over the key's
   * UTF-8 bytes with seed 0, as (hi, lo) unsigned halves.
   */
  function hashKey(key: string): KeyHash {
    const len = encodeUtf8(key);
    const bytes = utf8;
    // The tail is read as a block zero-filled past the key: zero bytes mix to zero, as the tail's
    // missing bytes do in MurmurHash3.
    for (let i = len; i < len + 16; i++) bytes[i] = 0;
    let h1h = 0;
    let h1l = 0;
    let h2h = 0;
    let h2l = 0;
    let kh = 0;
    let kl = 0;
    let th = 0;
    let tl = 0;
    let sum = 0;
    let a0 = 0;
    let a1 = 0;
    let p01 = 0;
    let p10 = 0;
    let mid = 0;
    const blocksEnd = len - (len & 15);
    for (let at = 0; at < len; at += 16) {
      // k1 *= c1; k1 = rotl(k1, 31); k1 *= c2; h1 ^= k1
      kh = le32(bytes, at + 4);
      kl = le32(bytes, at);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0x53d5);
      p10 = Math.imul(a0, 0x1142);
      mid = (Math.imul(a0, 0x53d5) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0x1142) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0x114253d5) + Math.imul(kl, 0x87c37b91)) | 0;
      tl = Math.imul(kl, 0x114253d5);
      kh = (th << 31) | (tl >>> 1);
      kl = (tl << 31) | (th >>> 1);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0x937f);
      p10 = Math.imul(a0, 0x2745);
      mid = (Math.imul(a0, 0x937f) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0x2745) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0x2745937f) + Math.imul(kl, 0x4cf5ad43)) | 0;
      tl = Math.imul(kl, 0x2745937f);
      h1h ^= th;
      h1l ^= tl;
      if (at < blocksEnd) {
        // h1 = rotl(h1, 27); h1 += h2; h1 = h1 * 5 + 0x52dce729
        th = (h1h << 27) | (h1l >>> 5);
        tl = (h1l << 27) | (h1h >>> 5);
        sum = (tl + h2l) | 0;
        th = (th + h2h + ((sum >>> 0) < (tl >>> 0) ? 1 : 0)) | 0;
        tl = sum;
        sum = ((tl << 2) + tl) | 0;
        th = (((th << 2) | (tl >>> 30)) + th + ((sum >>> 0) < (tl >>> 0) ? 1 : 0)) | 0;
        h1l = (sum + 0x52dce729) | 0;
        h1h = (th + ((h1l >>> 0) < (sum >>> 0) ? 1 : 0)) | 0;
      }
      // k2 *= c2; k2 = rotl(k2, 33); k2 *= c1; h2 ^= k2
      kh = le32(bytes, at + 12);
      kl = le32(bytes, at + 8);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0x937f);
      p10 = Math.imul(a0, 0x2745);
      mid = (Math.imul(a0, 0x937f) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0x2745) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0x2745937f) + Math.imul(kl, 0x4cf5ad43)) | 0;
      tl = Math.imul(kl, 0x2745937f);
      kh = (tl << 1) | (th >>> 31);
      kl = (th << 1) | (tl >>> 31);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0x53d5);
      p10 = Math.imul(a0, 0x1142);
      mid = (Math.imul(a0, 0x53d5) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0x1142) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0x114253d5) + Math.imul(kl, 0x87c37b91)) | 0;
      tl = Math.imul(kl, 0x114253d5);
      h2h ^= th;
      h2l ^= tl;
      if (at < blocksEnd) {
        // h2 = rotl(h2, 31); h2 += h1; h2 = h2 * 5 + 0x38495ab5
        th = (h2h << 31) | (h2l >>> 1);
        tl = (h2l << 31) | (h2h >>> 1);
        sum = (tl + h1l) | 0;
        th = (th + h1h + ((sum >>> 0) < (tl >>> 0) ? 1 : 0)) | 0;
        tl = sum;
        sum = ((tl << 2) + tl) | 0;
        th = (((th << 2) | (tl >>> 30)) + th + ((sum >>> 0) < (tl >>> 0) ? 1 : 0)) | 0;
        h2l = (sum + 0x38495ab5) | 0;
        h2h = (th + ((h2l >>> 0) < (sum >>> 0) ? 1 : 0)) | 0;
      }
    }
    // h1 ^= len; h2 ^= len; h1 += h2; h2 += h1
    h1l ^= len;
    h2l ^= len;
    sum = (h1l + h2l) | 0;
    h1h = (h1h + h2h + ((sum >>> 0) < (h1l >>> 0) ? 1 : 0)) | 0;
    h1l = sum;
    sum = (h2l + h1l) | 0;
    h2h = (h2h + h1h + ((sum >>> 0) < (h2l >>> 0) ? 1 : 0)) | 0;
    h2l = sum;
    // fmix64 of h1, then of h2: k ^= k >>> 33; k *= f1; k ^= k >>> 33; k *= f2; k ^= k >>> 33
    for (let round = 0; round < 2; round++) {
      kh = round === 0 ? h1h : h2h;
      kl = (round === 0 ? h1l : h2l) ^ (kh >>> 1);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0x8ccd);
      p10 = Math.imul(a0, 0xed55);
      mid = (Math.imul(a0, 0x8ccd) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0xed55) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0xed558ccd) + Math.imul(kl, 0xff51afd7)) | 0;
      tl = Math.imul(kl, 0xed558ccd);
      kh = th;
      kl = tl ^ (th >>> 1);
      a0 = kl & 0xffff;
      a1 = kl >>> 16;
      p01 = Math.imul(a1, 0xec53);
      p10 = Math.imul(a0, 0x1a85);
      mid = (Math.imul(a0, 0xec53) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
      th = (Math.imul(a1, 0x1a85) + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(kh, 0x1a85ec53) + Math.imul(kl, 0xc4ceb9fe)) | 0;
      tl = Math.imul(kl, 0x1a85ec53);
      if (round === 0) {
        h1h = th;
        h1l = tl ^ (th >>> 1);
      } else {
        h2h = th;
        h2l = tl ^ (th >>> 1);
      }
    }
    // h1 += h2
    sum = (h1l + h2l) | 0;
    return { hi: (h1h + h2h + ((sum >>> 0) < (h1l >>> 0) ? 1 : 0)) >>> 0, lo: sum >>> 0 };
  }

  /** The register value of a hash (its index is `lo & INDEX_MASK`): 1 + trailing zeros of hash >>> 14, at most 31; 0 when that is 0. */
  function valueOf(hi: number, lo: number): number {
    const low = lo >>> LOG2M;
    if (low !== 0) return 32 - Math.clz32(low & -low);
    if (hi === 0) return 0;
    const v = 50 - Math.clz32(hi & -hi);
    return v > MAX_VALUE ? MAX_VALUE : v;
  }

  /** Signed big-endian 32-bit word (the high half of an explicit hash, compared signed). */
  function readI32(bytes: Uint8Array, at: number): number {
    return ((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
  }

  function writeU32(bytes: Uint8Array, at: number, value: number): void {
    bytes[at] = value >>> 24;
    bytes[at + 1] = value >>> 16;
    bytes[at + 2] = value >>> 8;
    bytes[at + 3] = value;
  }

  // Copies of stored bytes are `new Uint8Array(bytes)`: a Buffer's slice() is a view of its memory.

  /** The type of stored bytes, after checking the header and the length; throws on anything else. */
  function typeOf(bytes: Uint8Array): number {
    if (!(bytes instanceof Uint8Array)) fail(`expected bytes, got ${bytes === null ? 'null' : typeof bytes}`);
    if (bytes.length < HEADER) fail(`${bytes.length} byte(s), shorter than the 3-byte header`);
    const first = bytes[0] as number;
    if (first >>> 4 !== 1) fail(`schema version ${first >>> 4} (byte 0x${first.toString(16).padStart(2, '0')})`);
    if (bytes[1] !== PARAMS) fail(`parameter byte 0x${(bytes[1] as number).toString(16).padStart(2, '0')}, expected 0x8e (regwidth 5, log2m 14)`);
    if (bytes[2] !== THRESHOLD) fail(`parameter byte 0x${(bytes[2] as number).toString(16).padStart(2, '0')}, expected 0x49 (expthresh 256, sparse on)`);
    const type = first & 15;
    if (type === TYPE_EMPTY) {
      if (bytes.length !== HEADER) fail(`empty sketch of ${bytes.length} bytes`);
    } else if (type === TYPE_EXPLICIT) {
      if ((bytes.length - HEADER) % 8 !== 0) fail(`explicit sketch of ${bytes.length} bytes, not a header and whole 8-byte hashes`);
      if (bytes.length > EXPLICIT_MAX_LENGTH) fail(`explicit sketch of ${(bytes.length - HEADER) / 8} hashes, more than ${EXACT_UP_TO}`);
    } else if (type === TYPE_SPARSE) {
      if (bytes.length > SPARSE_MAX_LENGTH) fail(`sparse sketch of ${bytes.length} bytes`);
    } else if (type === TYPE_FULL) {
      if (bytes.length !== FULL_LENGTH) fail(`full sketch of ${bytes.length} bytes, expected ${FULL_LENGTH}`);
    } else {
      fail(`type ${type}`);
    }
    return type;
  }

  /** Checks that an explicit sketch's hashes strictly ascend (as signed 64-bit integers); returns their number. */
  function checkExplicit(bytes: Uint8Array): number {
    const end = bytes.length;
    if (end === HEADER) return 0;
    let prevHi = readI32(bytes, HEADER);
    let prevLo = readI32(bytes, HEADER + 4) >>> 0;
    for (let at = HEADER + 8; at < end; at += 8) {
      const hi = readI32(bytes, at);
      const lo = readI32(bytes, at + 4) >>> 0;
      if (hi < prevHi || (hi === prevHi && lo <= prevLo)) fail('explicit hashes not strictly ascending');
      prevHi = hi;
      prevLo = lo;
    }
    return (end - HEADER) / 8;
  }

  /** Decodes a sparse sketch into a register list, checking it (ascending indexes, non-zero values, padding); returns the list's length. */
  function decodeSparse(bytes: Uint8Array, list: Int32Array): number {
    const bits = (bytes.length - HEADER) * 8;
    const n = Math.floor(bits / ENTRY_BITS);
    if (bits - n * ENTRY_BITS >= 8) fail(`sparse sketch of ${bytes.length} bytes: ${bits - n * ENTRY_BITS} bits of padding`);
    const end = bytes.length;
    let prev = -1;
    let bad = -1;
    let i = 0;
    // Each entry from the big-endian 32-bit word at its first byte, while 4 bytes are left.
    for (let bit = HEADER * 8; i < n && (bit >>> 3) + 4 <= end; i++, bit += ENTRY_BITS) {
      const at = bit >>> 3;
      const word = ((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
      const entry = (word >>> (32 - ENTRY_BITS - (bit & 7))) & ENTRY_MASK;
      // Checked after the loop: a zero value or an index not above the previous one.
      if ((entry & MAX_VALUE) === 0 || entry >>> WIDTH <= prev) bad = bad < 0 ? i : bad;
      prev = entry >>> WIDTH;
      list[i] = entry;
    }
    for (let bit = HEADER * 8 + i * ENTRY_BITS; i < n; i++, bit += ENTRY_BITS) {
      const at = bit >>> 3;
      let word = 0;
      for (let k = 0; k < 4; k++) word = (word << 8) | (at + k < end ? (bytes[at + k] as number) : 0);
      const entry = (word >>> (32 - ENTRY_BITS - (bit & 7))) & ENTRY_MASK;
      if ((entry & MAX_VALUE) === 0 || entry >>> WIDTH <= prev) bad = bad < 0 ? i : bad;
      prev = entry >>> WIDTH;
      list[i] = entry;
    }
    if (bad >= 0) {
      const entry = list[bad] as number;
      const index = entry >>> WIDTH;
      if ((entry & MAX_VALUE) === 0) fail(`sparse register ${index} of value 0`);
      fail(`sparse register index ${index} after ${(list[bad - 1] as number) >>> WIDTH}`);
    }
    // The padding: fewer than 8 bits at the end of the last byte, all zero.
    const padding = bits - n * ENTRY_BITS;
    if (padding > 0 && ((bytes[end - 1] as number) & ((1 << padding) - 1)) !== 0) fail('sparse padding bits not zero');
    return n;
  }

  /** An explicit sketch as a register list (checked). */
  function explicitToList(bytes: Uint8Array, list: Int32Array): number {
    const n = checkExplicit(bytes);
    let k = 0;
    for (let i = 0, at = HEADER; i < n; i++, at += 8) {
      const lo = readI32(bytes, at + 4);
      const value = valueOf(readI32(bytes, at) >>> 0, lo >>> 0);
      if (value !== 0) list[k++] = ((lo & INDEX_MASK) << WIDTH) | value;
    }
    return sortList(list, k);
  }

  /** Sorts a list of register entries and keeps the largest value of each register; returns its new length. */
  function sortList(list: Int32Array, n: number): number {
    if (n > 1) list.subarray(0, n).sort();
    // Entries of one register are now adjacent, the largest value last.
    let k = 0;
    for (let i = 0; i < n; i++) {
      const entry = list[i] as number;
      if (k > 0 && (list[k - 1] as number) >>> WIDTH === entry >>> WIDTH) list[k - 1] = entry;
      else list[k++] = entry;
    }
    return k;
  }

  /** The register list of explicit or sparse bytes (checked). */
  function listOf(bytes: Uint8Array, type: number, list: Int32Array): number {
    return type === TYPE_EXPLICIT ? explicitToList(bytes, list) : type === TYPE_SPARSE ? decodeSparse(bytes, list) : 0;
  }

  function applyList(regs: Uint8Array, list: Int32Array, n: number): void {
    for (let i = 0; i < n; i++) {
      const entry = list[i] as number;
      const index = entry >>> WIDTH;
      const value = entry & MAX_VALUE;
      if (value > (regs[index] as number)) regs[index] = value;
    }
  }

  /** The union of two register lists into `out`; returns its length. */
  function unionLists(a: Int32Array, na: number, b: Int32Array, nb: number, out: Int32Array): number {
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < na && j < nb) {
      const ea = a[i] as number;
      const eb = b[j] as number;
      const ia = ea >>> WIDTH;
      const ib = eb >>> WIDTH;
      if (ia < ib) {
        out[k++] = ea;
        i++;
      } else if (ib < ia) {
        out[k++] = eb;
        j++;
      } else {
        out[k++] = ea > eb ? ea : eb;
        i++;
        j++;
      }
    }
    while (i < na) out[k++] = a[i++] as number;
    while (j < nb) out[k++] = b[j++] as number;
    return k;
  }

  /**
   * A register list as sparse bytes (19-bit entries, most significant bit first). Each entry is
   * written as a 32-bit big-endian window at its first byte: only that byte may hold bits of the
   * entry before, the next three are new.
   */
  function encodeSparse(list: Int32Array, n: number): Uint8Array {
    const length = HEADER + Math.ceil((n * ENTRY_BITS) / 8);
    const out = new Uint8Array(length);
    out[0] = 0x10 | TYPE_SPARSE;
    out[1] = PARAMS;
    out[2] = THRESHOLD;
    let i = 0;
    let bit = 0;
    for (; i < n; i++, bit += ENTRY_BITS) {
      const at = HEADER + (bit >>> 3);
      if (at + 3 >= length) break;
      const window = (list[i] as number) << (32 - ENTRY_BITS - (bit & 7));
      out[at] |= window >>> 24;
      out[at + 1] = window >>> 16;
      out[at + 2] = window >>> 8;
      out[at + 3] = window;
    }
    // The last entries, whose window would reach past the end.
    for (; i < n; i++, bit += ENTRY_BITS) {
      const at = HEADER + (bit >>> 3);
      const window = (list[i] as number) << (32 - ENTRY_BITS - (bit & 7));
      out[at] |= window >>> 24;
      if (at + 1 < length) out[at + 1] = window >>> 16;
      if (at + 2 < length) out[at + 2] = window >>> 8;
      if (at + 3 < length) out[at + 3] = window;
    }
    return out;
  }

  /** Registers as full bytes: 8 registers of 5 bits in each 5 bytes. */
  function packFull(regs: Uint8Array): Uint8Array {
    const out = new Uint8Array(FULL_LENGTH);
    out[0] = 0x10 | TYPE_FULL;
    out[1] = PARAMS;
    out[2] = THRESHOLD;
    for (let i = 0, at = HEADER; i < M; i += 8, at += 5) {
      const r1 = regs[i + 1] as number;
      const r3 = regs[i + 3] as number;
      const r4 = regs[i + 4] as number;
      const r6 = regs[i + 6] as number;
      out[at] = ((regs[i] as number) << 3) | (r1 >>> 2);
      out[at + 1] = ((r1 & 3) << 6) | ((regs[i + 2] as number) << 1) | (r3 >>> 4);
      out[at + 2] = ((r3 & 15) << 4) | (r4 >>> 1);
      out[at + 3] = ((r4 & 1) << 7) | ((regs[i + 5] as number) << 2) | (r6 >>> 3);
      out[at + 4] = ((r6 & 7) << 5) | (regs[i + 7] as number);
    }
    return out;
  }

  /** Full bytes into registers (one a byte), written a word (four registers) at a time. */
  function unpackFull(bytes: Uint8Array, regs: Uint8Array, regs32: Uint32Array): void {
    for (let i = 0, at = HEADER; i < M; i += 8, at += 5) {
      const b0 = bytes[at] as number;
      const b1 = bytes[at + 1] as number;
      const b2 = bytes[at + 2] as number;
      const b3 = bytes[at + 3] as number;
      const b4 = bytes[at + 4] as number;
      const r0 = b0 >>> 3;
      const r1 = ((b0 & 7) << 2) | (b1 >>> 6);
      const r2 = (b1 >>> 1) & 31;
      const r3 = ((b1 & 1) << 4) | (b2 >>> 4);
      const r4 = ((b2 & 15) << 1) | (b3 >>> 7);
      const r5 = (b3 >>> 2) & 31;
      const r6 = ((b3 & 3) << 3) | (b4 >>> 5);
      const r7 = b4 & 31;
      if (LITTLE_ENDIAN) {
        regs32[i >>> 2] = r0 | (r1 << 8) | (r2 << 16) | (r3 << 24);
        regs32[(i >>> 2) + 1] = r4 | (r5 << 8) | (r6 << 16) | (r7 << 24);
      } else {
        regs[i] = r0;
        regs[i + 1] = r1;
        regs[i + 2] = r2;
        regs[i + 3] = r3;
        regs[i + 4] = r4;
        regs[i + 5] = r5;
        regs[i + 6] = r6;
        regs[i + 7] = r7;
      }
    }
  }

  /** Raises the registers of full bytes to a list's values, in place. */
  function patchFull(out: Uint8Array, list: Int32Array, n: number): void {
    for (let i = 0; i < n; i++) {
      const entry = list[i] as number;
      const index = entry >>> WIDTH;
      const value = entry & MAX_VALUE;
      if (fullRegister(out, index) < value) setFullRegister(out, index, value);
    }
  }

  /** The value of register `index` of full bytes. */
  function fullRegister(bytes: Uint8Array, index: number): number {
    const bit = index * WIDTH;
    const at = HEADER + (bit >>> 3);
    // The register's 5 bits within the 16 bits from `at`, counted from the most significant.
    const w = ((bytes[at] as number) << 8) | (at + 1 < FULL_LENGTH ? (bytes[at + 1] as number) : 0);
    return (w >>> (11 - (bit & 7))) & MAX_VALUE;
  }

  /** Sets register `index` of full bytes to `value`, in place. */
  function setFullRegister(bytes: Uint8Array, index: number, value: number): void {
    const bit = index * WIDTH;
    const at = HEADER + (bit >>> 3);
    const shift = 11 - (bit & 7);
    const w = ((bytes[at] as number) << 8) | (at + 1 < FULL_LENGTH ? (bytes[at + 1] as number) : 0);
    const set = (w & ~(MAX_VALUE << shift)) | (value << shift);
    bytes[at] = set >>> 8;
    if (at + 1 < FULL_LENGTH) bytes[at + 1] = set;
  }

  /** Register-wise max of words into words, four registers at a time (values below 128, so no byte borrows from another). */
  function maxWords(into: Uint32Array, from: Uint32Array): void {
    for (let g = 0; g < GROUPS; g++) {
      const a = into[g] as number;
      const b = from[g] as number;
      if (a === b) continue;
      const keepA = Math.imul((((a | 0x80808080) - b) & 0x80808080) >>> 7, 0xff);
      into[g] = (a & keepA) | (b & ~keepA);
    }
  }

  /** Registers as stored: sparse while that is smaller than full. */
  function encodeRegisters(regs: Uint8Array, regs32: Uint32Array): Uint8Array {
    let n = 0;
    for (let g = 0; g < GROUPS; g++) {
      if (regs32[g] === 0) continue;
      for (let i = 4 * g; i < 4 * g + 4; i++) {
        const value = regs[i] as number;
        if (value === 0) continue;
        if (n === SPARSE_MAX) return packFull(regs);
        listC[n++] = (i << WIDTH) | value;
      }
    }
    return encodeSparse(listC, n);
  }

  /** A register list as stored: sparse, or full past SPARSE_MAX registers. */
  function encodeList(list: Int32Array, n: number): Uint8Array {
    if (n <= SPARSE_MAX) return encodeSparse(list, n);
    regsA.fill(0);
    applyList(regsA, list, n);
    return packFull(regsA);
  }

  /** σ(x) of Ertl's estimator (the zero registers' term). */
  function sigma(x: number): number {
    if (x === 1) return Infinity;
    let y = 1;
    let z = x;
    for (;;) {
      x *= x;
      const before = z;
      z += x * y;
      y += y;
      if (z === before) return z;
    }
  }

  /** τ(x) of Ertl's estimator (the saturated registers' term). */
  function tau(x: number): number {
    if (x === 0 || x === 1) return 0;
    let y = 1;
    let z = 1 - x;
    for (;;) {
      x = Math.sqrt(x);
      const before = z;
      y *= 0.5;
      z -= (1 - x) * (1 - x) * y;
      if (z === before) return z / 3;
    }
  }

  /** Ertl's improved raw estimate from `histogram` (registers per value 0 … q + 1), rounded to a count. */
  function estimateFromHistogram(): number {
    let z = M * tau(1 - (histogram[Q + 1] as number) / M);
    for (let k = Q; k >= 1; k--) z = 0.5 * (z + (histogram[k] as number));
    z += M * sigma((histogram[0] as number) / M);
    // α∞ m² / z with α∞ = 1 / (2 ln 2); all registers zero make z infinite and the estimate 0.
    return Math.round((M * M) / (2 * Math.LN2 * z));
  }

  function sumLanes(): void {
    for (let v = 0; v < 32; v++) {
      let sum = 0;
      for (let l = v; l < 256; l += 32) sum += lanes[l] as number;
      histogram[v] = sum;
    }
  }

  function estimateRegisters(regs32: Uint32Array): number {
    lanes.fill(0);
    for (let g = 0; g < GROUPS; g++) {
      const w = regs32[g] as number;
      lanes[w & 31]++;
      lanes[32 + ((w >>> 8) & 31)]++;
      lanes[64 + ((w >>> 16) & 31)]++;
      lanes[96 + (w >>> 24)]++;
    }
    sumLanes();
    return estimateFromHistogram();
  }

  /** The histogram of full bytes' register values (registers per value), in one pass. */
  function fullHistogram(bytes: Uint8Array): void {
    lanes.fill(0);
    for (let at = HEADER; at < FULL_LENGTH; at += 5) {
      const b0 = bytes[at] as number;
      const b1 = bytes[at + 1] as number;
      const b2 = bytes[at + 2] as number;
      const b3 = bytes[at + 3] as number;
      const b4 = bytes[at + 4] as number;
      lanes[b0 >>> 3]++;
      lanes[32 + (((b0 & 7) << 2) | (b1 >>> 6))]++;
      lanes[64 + ((b1 >>> 1) & 31)]++;
      lanes[96 + (((b1 & 1) << 4) | (b2 >>> 4))]++;
      lanes[128 + (((b2 & 15) << 1) | (b3 >>> 7))]++;
      lanes[160 + ((b3 >>> 2) & 31)]++;
      lanes[192 + (((b3 & 3) << 3) | (b4 >>> 5))]++;
      lanes[224 + (b4 & 31)]++;
    }
    sumLanes();
  }

  /** The estimate of full bytes in one pass. */
  function estimateFull(bytes: Uint8Array): number {
    fullHistogram(bytes);
    return estimateFromHistogram();
  }

  /** Union of two explicit sketches by a merge of their sorted hashes: the write path's common case. Null past EXACT_UP_TO hashes. */
  function unionExplicit(a: Uint8Array, b: Uint8Array): Uint8Array | null {
    const na = checkExplicit(a);
    const nb = checkExplicit(b);
    if (na === 0) return nb === 0 ? EMPTY.slice() : new Uint8Array(b);
    if (nb === 0) return new Uint8Array(a);
    const aEnd = a.length;
    const bEnd = b.length;
    let i = HEADER;
    let j = HEADER;
    let at = HEADER;
    let aHi = readI32(a, i);
    let aLo = readI32(a, i + 4) >>> 0;
    let bHi = readI32(b, j);
    let bLo = readI32(b, j + 4) >>> 0;
    while (i < aEnd || j < bEnd) {
      if (at === EXPLICIT_MAX_LENGTH) return null;
      // A side that has run out compares as greater than any hash.
      const fromA = j >= bEnd || (i < aEnd && (aHi < bHi || (aHi === bHi && aLo <= bLo)));
      const fromB = i >= aEnd || (j < bEnd && (bHi < aHi || (bHi === aHi && bLo <= aLo)));
      writeU32(explicitOut, at, fromA ? aHi : bHi);
      writeU32(explicitOut, at + 4, fromA ? aLo : bLo);
      at += 8;
      if (fromA) {
        i += 8;
        if (i < aEnd) {
          aHi = readI32(a, i);
          aLo = readI32(a, i + 4) >>> 0;
        }
      }
      if (fromB) {
        j += 8;
        if (j < bEnd) {
          bHi = readI32(b, j);
          bLo = readI32(b, j + 4) >>> 0;
        }
      }
    }
    explicitOut[0] = 0x10 | TYPE_EXPLICIT;
    explicitOut[1] = PARAMS;
    explicitOut[2] = THRESHOLD;
    return explicitOut.slice(0, at);
  }

  function unionSketchBytes(a: Uint8Array | null, b: Uint8Array | null): Uint8Array {
    let left = a ?? EMPTY;
    let right = b ?? EMPTY;
    let typeA = typeOf(left);
    let typeB = typeOf(right);
    // Union is symmetric: order the sides by type (empty, explicit, sparse, full).
    if (typeA > typeB) {
      const bytes = left;
      left = right;
      right = bytes;
      const type = typeA;
      typeA = typeB;
      typeB = type;
    }
    if (typeA === TYPE_EMPTY) {
      // The other side as it is, after checking it; re-encoded when it holds registers, so that
      // the result is in the form its registers call for.
      if (typeB === TYPE_EMPTY) return EMPTY.slice();
      if (typeB === TYPE_EXPLICIT) return checkExplicit(right) === 0 ? EMPTY.slice() : new Uint8Array(right);
      if (typeB === TYPE_SPARSE) return encodeList(listA, decodeSparse(right, listA));
      return new Uint8Array(right);
    }
    if (typeB === TYPE_FULL) {
      if (typeA === TYPE_FULL) {
        unpackFull(left, regsA, regsA32);
        unpackFull(right, regsB, regsB32);
        maxWords(regsA32, regsB32);
        return packFull(regsA);
      }
      // Full stays full (a union never has fewer non-zero registers): copy it and raise the
      // registers the other side sets.
      const n = listOf(left, typeA, listA);
      const out = new Uint8Array(right);
      patchFull(out, listA, n);
      return out;
    }
    if (typeB === TYPE_EXPLICIT) {
      const union = unionExplicit(left, right);
      if (union !== null) return union;
    }
    const na = listOf(left, typeA, listA);
    const nb = listOf(right, typeB, listB);
    return encodeList(listC, unionLists(listA, na, listB, nb, listC));
  }

  function estimateSketchBytes(bytes: Uint8Array | null): number {
    if (bytes === null) return 0;
    const type = typeOf(bytes);
    if (type === TYPE_EMPTY) return 0;
    if (type === TYPE_EXPLICIT) return checkExplicit(bytes);
    if (type === TYPE_FULL) return estimateFull(bytes);
    const n = decodeSparse(bytes, listA);
    histogram.fill(0);
    histogram[0] = M - n;
    for (let i = 0; i < n; i++) histogram[(listA[i] as number) & MAX_VALUE]++;
    return estimateFromHistogram();
  }

  class Sketch implements VisitorSketch {
    /** The registers once past the exact range (null while explicit), and a word view of them. */
    private regs: Uint8Array | null;
    private regs32: Uint32Array | null;
    /**
     * While explicit: an open-addressing table of the hashes, [hi, lo] per slot, (0, 0) marking an
     * empty slot (the hash (0, 0) itself is `hasZero`), at most half full. Cheaper per add than a
     * sorted array; sorted only when stored.
     */
    private slots: Uint32Array;
    private count: number;
    private hasZero: boolean;

    private constructor() {
      this.regs = null;
      this.regs32 = null;
      this.slots = new Uint32Array(2 * FIRST_SLOTS);
      this.count = 0;
      this.hasZero = false;
    }

    static empty(): VisitorSketch {
      return new Sketch();
    }

    static fromBytes(bytes: Uint8Array): VisitorSketch {
      return new Sketch().mergeBytes(bytes);
    }

    add(hash: KeyHash): void {
      this.addHash(hash.hi >>> 0, hash.lo >>> 0);
    }

    private addHash(hi: number, lo: number): void {
      const regs = this.regs;
      if (regs !== null) {
        const index = lo & INDEX_MASK;
        const value = valueOf(hi, lo);
        if (value > (regs[index] as number)) regs[index] = value;
        return;
      }
      if ((hi | lo) === 0) {
        if (this.hasZero) return;
        this.hasZero = true;
      } else {
        const slots = this.slots;
        const mask = (slots.length >>> 1) - 1;
        // The low bits of `lo` are the register index: as uniform as any.
        let s = lo & mask;
        for (;;) {
          const h = slots[2 * s] as number;
          const l = slots[2 * s + 1] as number;
          if (h === hi && l === lo) return;
          if ((h | l) === 0) break;
          s = (s + 1) & mask;
        }
        slots[2 * s] = hi;
        slots[2 * s + 1] = lo;
      }
      this.count++;
      if (this.count > EXACT_UP_TO) this.toRegisters();
      else if (this.count * 4 > this.slots.length) this.resize(this.slots.length); // twice the slots (2 words a slot)
    }

    /** Makes room for `more` keys in one rehash (a merge of a whole set) rather than by doublings. */
    private reserve(more: number): void {
      const want = Math.min(this.count + more, EXACT_UP_TO);
      let slotCount = this.slots.length / 2;
      while (want * 2 > slotCount) slotCount *= 2;
      if (slotCount * 2 !== this.slots.length) this.resize(slotCount);
    }

    /** Rehashes into a table of `slotCount` slots (a power of two). */
    private resize(slotCount: number): void {
      const old = this.slots;
      const slots = new Uint32Array(2 * slotCount);
      const mask = slotCount - 1;
      for (let i = 0; i < old.length; i += 2) {
        const hi = old[i] as number;
        const lo = old[i + 1] as number;
        if ((hi | lo) === 0) continue;
        let s = lo & mask;
        while (((slots[2 * s] as number) | (slots[2 * s + 1] as number)) !== 0) s = (s + 1) & mask;
        slots[2 * s] = hi;
        slots[2 * s + 1] = lo;
      }
      this.slots = slots;
    }

    /** Raises `regs` to the registers the explicit hashes set (the hash (0, 0) sets none: its value is 0). */
    private explicitInto(regs: Uint8Array): void {
      const slots = this.slots;
      for (let i = 0; i < slots.length; i += 2) {
        const hi = slots[i] as number;
        const lo = slots[i + 1] as number;
        if ((hi | lo) === 0) continue;
        const index = lo & INDEX_MASK;
        const value = valueOf(hi, lo);
        if (value > (regs[index] as number)) regs[index] = value;
      }
    }

    private toRegisters(): Uint32Array {
      if (this.regs32 !== null) return this.regs32;
      const regs32 = new Uint32Array(GROUPS);
      const regs = new Uint8Array(regs32.buffer);
      this.explicitInto(regs);
      this.regs = regs;
      this.regs32 = regs32;
      this.slots = new Uint32Array(0);
      this.count = 0;
      this.hasZero = false;
      return regs32;
    }

    merge(other: VisitorSketch): this {
      if (other === this) return this;
      if (!(other instanceof Sketch)) return this.mergeBytes(other.toBytes());
      if (other.regs32 !== null) {
        maxWords(this.toRegisters(), other.regs32);
        return this;
      }
      if (this.regs === null) this.reserve(other.count);
      const slots = other.slots;
      for (let i = 0; i < slots.length; i += 2) {
        const hi = slots[i] as number;
        const lo = slots[i + 1] as number;
        if ((hi | lo) !== 0) this.addHash(hi, lo);
      }
      if (other.hasZero) this.addHash(0, 0);
      return this;
    }

    mergeBytes(bytes: Uint8Array): this {
      // Each branch checks all of the bytes before it changes anything.
      const type = typeOf(bytes);
      if (type === TYPE_EXPLICIT) {
        const n = checkExplicit(bytes);
        if (this.regs === null) this.reserve(n);
        for (let at = HEADER; at < bytes.length; at += 8) this.addHash(readI32(bytes, at) >>> 0, readI32(bytes, at + 4) >>> 0);
      } else if (type === TYPE_SPARSE) {
        const n = decodeSparse(bytes, listA);
        this.toRegisters();
        applyList(this.regs as Uint8Array, listA, n);
      } else if (type === TYPE_FULL) {
        unpackFull(bytes, regsA, regsA32);
        maxWords(this.toRegisters(), regsA32);
      }
      return this;
    }

    estimate(): number {
      return this.regs32 === null ? this.count : estimateRegisters(this.regs32);
    }

    /** The HyperLogLog estimate whatever the representation. */
    registerEstimate(): number {
      if (this.regs32 !== null) return estimateRegisters(this.regs32);
      regsA.fill(0);
      this.explicitInto(regsA);
      return estimateRegisters(regsA32);
    }

    toBytes(): Uint8Array {
      if (this.regs !== null) return encodeRegisters(this.regs, this.regs32 as Uint32Array);
      const n = this.count;
      if (n === 0) return EMPTY.slice();
      const out = new Uint8Array(HEADER + 8 * n);
      out[0] = 0x10 | TYPE_EXPLICIT;
      out[1] = PARAMS;
      out[2] = THRESHOLD;
      let w = 0;
      if (this.hasZero) {
        sortWords[0] = 0;
        sortWords[1] = 0;
        w = 2;
      }
      const slots = this.slots;
      for (let i = 0; i < slots.length; i += 2) {
        const hi = slots[i] as number;
        const lo = slots[i + 1] as number;
        if ((hi | lo) === 0) continue;
        sortWords[w + HI_WORD] = hi;
        sortWords[w + LO_WORD] = lo;
        w += 2;
      }
      // BigInt64Array sorts as signed 64-bit integers, the extension's order.
      if (n > 1) sortKeys.subarray(0, n).sort();
      for (let i = 0, at = HEADER; i < n; i++, at += 8) {
        writeU32(out, at, sortWords[2 * i + HI_WORD] as number);
        writeU32(out, at + 4, sortWords[2 * i + LO_WORD] as number);
      }
      return out;
    }
  }

  /** How many registers of full bytes are not zero. */
  function nonZeroFull(bytes: Uint8Array): number {
    fullHistogram(bytes);
    return M - (histogram[0] as number);
  }

  function unionAll(finer: ReadonlyArray<Uint8Array | null>): Uint8Array {
    const merged = Sketch.empty();
    for (const bytes of finer) if (bytes !== null) merged.mergeBytes(bytes);
    return merged.toBytes();
  }

  /** Entry `i` of sparse bytes (index << 5 | value), read where it lies without decoding the others. */
  function sparseEntry(bytes: Uint8Array, i: number): number {
    const bit = HEADER * 8 + i * ENTRY_BITS;
    const at = bit >>> 3;
    let word = 0;
    for (let k = 0; k < 4; k++) word = (word << 8) | (at + k < bytes.length ? (bytes[at + k] as number) : 0);
    return (word >>> (32 - ENTRY_BITS - (bit & 7))) & ENTRY_MASK;
  }

  /** The value of register `index` of sparse bytes of `n` entries: a binary search of its sorted entries. */
  function sparseRegister(bytes: Uint8Array, n: number, index: number): number {
    let low = 0;
    let high = n - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const entry = sparseEntry(bytes, middle);
      const at = entry >>> WIDTH;
      if (at === index) return entry & MAX_VALUE;
      if (at < index) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }

  /** How many registers `touchedList` holds; `touchedMark` is set at each of them. */
  let touched = 0;

  /** Clears the touched marks: a mark left set would keep a later call from patching that register. */
  function clearTouched(): void {
    for (let t = 0; t < touched; t++) touchedMark[touchedList[t] as number] = 0;
    touched = 0;
  }

  /**
   * Marks the registers the keys of `erased` set; false for a sketch past the exact range, whose
   * keys' registers are not told apart from others' (never one user's keys).
   */
  function markTouched(erased: ReadonlyArray<Uint8Array | null>): boolean {
    for (const bytes of erased) {
      if (bytes === null) continue;
      const type = typeOf(bytes);
      if (type === TYPE_FULL) return false;
      const n = listOf(bytes, type, listB);
      for (let i = 0; i < n; i++) {
        const index = (listB[i] as number) >>> WIDTH;
        if (touchedMark[index] === 1) continue;
        touchedMark[index] = 1;
        touchedList[touched++] = index;
      }
    }
    return true;
  }

  /**
   * Raises `touchedValue` at the touched registers to the values `bytes` holds there: a sparse or
   * full sketch read at those registers only (a sparse one by binary search, so its other entries
   * are neither decoded nor checked), an explicit one hash by hash.
   */
  function raiseTouched(bytes: Uint8Array): void {
    const type = typeOf(bytes);
    if (type === TYPE_EXPLICIT) {
      const n = checkExplicit(bytes);
      for (let i = 0, at = HEADER; i < n; i++, at += 8) {
        const lo = readI32(bytes, at + 4) >>> 0;
        const index = lo & INDEX_MASK;
        if (touchedMark[index] !== 1) continue;
        const value = valueOf(readI32(bytes, at) >>> 0, lo);
        if (value > (touchedValue[index] as number)) touchedValue[index] = value;
      }
      return;
    }
    if (type === TYPE_EMPTY) return;
    const n = type === TYPE_SPARSE ? Math.floor(((bytes.length - HEADER) * 8) / ENTRY_BITS) : 0;
    for (let t = 0; t < touched; t++) {
      const index = touchedList[t] as number;
      const value = type === TYPE_FULL ? fullRegister(bytes, index) : sparseRegister(bytes, n, index);
      if (value > (touchedValue[index] as number)) touchedValue[index] = value;
    }
  }

  /** `previous` (sparse or full bytes) with each touched register set to its `touchedValue`, in the form its registers then take. */
  function patchRegisters(previous: Uint8Array, previousType: number): Uint8Array {
    if (previousType === TYPE_FULL) {
      // A copy with the touched registers set in place, unless one went to zero: then the form
      // is chosen again from every register (it turns sparse at SPARSE_MAX non-zero ones).
      const out = new Uint8Array(previous);
      let zeroed = false;
      for (let t = 0; t < touched; t++) {
        const index = touchedList[t] as number;
        const value = touchedValue[index] as number;
        if (value === 0 && fullRegister(out, index) !== 0) zeroed = true;
        setFullRegister(out, index, value);
      }
      if (!zeroed || nonZeroFull(out) > SPARSE_MAX) return out;
      unpackFull(out, regsA, regsA32);
      return encodeRegisters(regsA, regsA32);
    }
    // Sparse: its entries with the touched ones set, in one walk of the two sorted lists. A
    // register's value never grows (keys only left), so the list should never outgrow the sparse
    // form; `encodeList` picks the form from its length all the same, should a row break that.
    const n = decodeSparse(previous, listA);
    const list = touchedList.subarray(0, touched).sort();
    let out = 0;
    let t = 0;
    for (let i = 0; i < n || t < touched; ) {
      const entryIndex = i < n ? (listA[i] as number) >>> WIDTH : M;
      const touchedIndex = t < touched ? (list[t] as number) : M;
      if (entryIndex < touchedIndex) {
        listC[out++] = listA[i++] as number;
        continue;
      }
      const value = touchedValue[touchedIndex] as number;
      if (value !== 0) listC[out++] = (touchedIndex << WIDTH) | value;
      t++;
      if (entryIndex === touchedIndex) i++;
    }
    return encodeList(listC, out);
  }

  function unionWithout(previous: Uint8Array | null, finer: ReadonlyArray<Uint8Array | null>, erased: ReadonlyArray<Uint8Array | null>): Uint8Array | null {
    let any = false;
    let registers = false;
    for (const bytes of finer) {
      if (bytes === null) continue;
      any = true;
      const type = typeOf(bytes);
      if (type === TYPE_SPARSE || type === TYPE_FULL) registers = true;
    }
    if (!any) return null;
    if (previous === null) return unionAll(finer);
    const previousType = typeOf(previous);
    if (previousType !== TYPE_SPARSE && previousType !== TYPE_FULL) return unionAll(finer);
    try {
      if (!markTouched(erased)) return unionAll(finer);
      // With every finer sketch an exact set, the union is one again at EXACT_UP_TO keys or fewer.
      // It holds more while more registers than that stay set whatever the erasure zeroes (each
      // set register is a key of its own): then it is registers, as `previous` is, and patched.
      if (!registers) {
        const set = previousType === TYPE_FULL ? nonZeroFull(previous) : Math.floor(((previous.length - HEADER) * 8) / ENTRY_BITS);
        if (set - touched <= EXACT_UP_TO) return unionAll(finer);
      }
      for (let t = 0; t < touched; t++) touchedValue[touchedList[t] as number] = 0;
      for (const bytes of finer) if (bytes !== null) raiseTouched(bytes);
      return patchRegisters(previous, previousType);
    } finally {
      clearTouched();
    }
  }

  /** The hashes of explicit (or empty) bytes as `hi:lo` strings; null for a sketch past the exact range. */
  function explicitHashes(bytes: Uint8Array): string[] | null {
    const type = typeOf(bytes);
    if (type === TYPE_EMPTY) return [];
    if (type !== TYPE_EXPLICIT) return null;
    const n = checkExplicit(bytes);
    const out: string[] = [];
    for (let i = 0, at = HEADER; i < n; i++, at += 8) out.push(`${readI32(bytes, at)}:${readI32(bytes, at + 4)}`);
    return out;
  }

  /** {@link withoutKeys} of an explicit `previous`: its hashes but the erased ones no kept key has. */
  function explicitWithout(previous: Uint8Array, kept: Uint8Array | null, erased: ReadonlyArray<Uint8Array | null>): Uint8Array | null | undefined {
    const gone = new Set<string>();
    for (const bytes of erased) {
      if (bytes === null) continue;
      const hashes = explicitHashes(bytes);
      if (hashes === null) return undefined;
      for (const hash of hashes) gone.add(hash);
    }
    // Of the keys left, only those at the erased keys' registers: an exact set of them, as `previous` is one.
    const stay = kept === null ? [] : explicitHashes(kept);
    if (stay === null) return undefined;
    for (const hash of stay) gone.delete(hash);
    const n = checkExplicit(previous);
    const out = new Uint8Array(previous.length);
    out.set(previous.subarray(0, HEADER));
    let at = HEADER;
    for (let i = 0, from = HEADER; i < n; i++, from += 8) {
      if (gone.has(`${readI32(previous, from)}:${readI32(previous, from + 4)}`)) continue;
      out.set(previous.subarray(from, from + 8), at);
      at += 8;
    }
    return at === HEADER ? null : out.slice(0, at);
  }

  function withoutKeys(previous: Uint8Array | null, kept: Uint8Array | null, erased: ReadonlyArray<Uint8Array | null>): Uint8Array | null | undefined {
    if (previous === null) return erased.every((bytes) => bytes === null || typeOf(bytes) === TYPE_EMPTY) ? null : undefined;
    const previousType = typeOf(previous);
    if (previousType === TYPE_EMPTY) return erased.every((bytes) => bytes === null || typeOf(bytes) === TYPE_EMPTY) ? null : undefined;
    if (previousType === TYPE_EXPLICIT) return explicitWithout(previous, kept, erased);
    try {
      if (!markTouched(erased)) return undefined;
      for (let t = 0; t < touched; t++) touchedValue[touchedList[t] as number] = 0;
      if (kept !== null) raiseTouched(kept);
      const out = patchRegisters(previous, previousType);
      // At EXACT_UP_TO set registers or fewer the keys left may be few enough for an exact set,
      // which registers cannot list: the caller counts them from the keys.
      const set = typeOf(out) === TYPE_FULL ? M : Math.floor(((out.length - HEADER) * 8) / ENTRY_BITS);
      return set > EXACT_UP_TO ? out : undefined;
    } finally {
      clearTouched();
    }
  }

  function registerOfKey(key: string): number {
    return hashKey(key).lo & INDEX_MASK;
  }

  function registerEstimate(sketch: VisitorSketch): number {
    return (sketch instanceof Sketch ? sketch : (Sketch.fromBytes(sketch.toBytes()) as Sketch)).registerEstimate();
  }

  return { hashKey, registerOfKey, registers: M, VisitorSketch: Sketch, unionSketchBytes, estimateSketchBytes, exactUpTo: EXACT_UP_TO, registerEstimate, unionWithout, withoutKeys };
}

const kit = createSketchKit();

/**
 * Hashes a key (a visitor or session id string) to 64 bits as the `hll` extension's `hll_hash_text`
 * does (MurmurHash3 x64 128 of its UTF-8 bytes, seed 0, first word); ~3 keys per stored event.
 * Part of the stored format.
 */
export const hashKey: (key: string) => KeyHash = kit.hashKey;

/** Makes sketches: `VisitorSketch.empty()`, `VisitorSketch.fromBytes(bytes)`. */
export const VisitorSketch: VisitorSketchClass = kit.VisitorSketch;

/**
 * Union of two stored sketches (null is empty) as new bytes; throws on bytes that are not a
 * sketch. The write path's SQLite function: two small explicit sketches merge without registers.
 */
export const unionSketchBytes: (a: Uint8Array | null, b: Uint8Array | null) => Uint8Array = kit.unionSketchBytes;

/** The estimate of stored bytes (null is empty: 0), read without building a sketch. */
export const estimateSketchBytes: (bytes: Uint8Array | null) => number = kit.estimateSketchBytes;

/** Up to this many distinct keys (256) a sketch is explicit and its count exact. */
export const SKETCH_EXACT_UP_TO: number = kit.exactUpTo;

/** See {@link SketchKit.unionWithout}. */
export const unionWithout: SketchKit['unionWithout'] = kit.unionWithout;

/** See {@link SketchKit.withoutKeys}. */
export const withoutKeys: SketchKit['withoutKeys'] = kit.withoutKeys;

/** See {@link SketchKit.registerOfKey}. */
export const registerOfKey: (key: string) => number = kit.registerOfKey;

/** See {@link SketchKit.registers}. */
export const SKETCH_REGISTERS: number = kit.registers;

/** See {@link SketchKit.registerEstimate}. @internal */
export const registerEstimate: (sketch: VisitorSketch) => number = kit.registerEstimate;

/**
 * Relative error |estimate − n| / n at the 99th percentile for counts above
 * {@link SKETCH_EXACT_UP_TO} (below it counts are exact): 2.2%. Measured by
 *
 *   node scripts/run-ts.mjs server/store/aggregates/sketch-accuracy.ts
 *
 * (seeded, so the table repeats exactly; each trial is one stream of distinct keys read at every
 * band; "keys": string keys, a random prefix and a counter, through hashKey; "uniform": random
 * 64-bit hashes, the estimator alone):
 *
 *       band  keys: trials   p50     p95     p99     max  │ uniform: trials  p50     p95     p99     max
 *        300          1100  0.33%   1.00%   1.33%   2.33% │           1000  0.33%   1.00%   1.33%   2.00%
 *      1,000          1100  0.30%   1.10%   1.50%   1.80% │           1000  0.40%   1.20%   1.50%   1.80%
 *      3,000          1100  0.37%   1.10%   1.47%   1.93% │           1000  0.40%   1.10%   1.47%   2.17%
 *     10,000          1100  0.40%   1.13%   1.56%   2.17% │           1000  0.43%   1.15%   1.59%   2.27%
 *     30,000          1100  0.42%   1.28%   1.71%   3.21% │           1000  0.44%   1.28%   1.56%   2.31%
 *    100,000          1100  0.54%   1.41%   1.88%   2.64% │           1000  0.50%   1.51%   1.93%   2.38%
 *    300,000           100  0.46%   1.51%   1.64%   1.87% │           1000  0.52%   1.51%   2.00%   2.53%
 *  1,000,000           100  0.50%   1.37%   2.40%   2.43% │           1000  0.56%   1.55%   1.98%   2.48%
 *
 * The mean signed error (bias) is within ±0.15% in every band. The worst p99 measured over 1,000
 * trials or more, 2.00% (300,000 keys), is given 0.1% for the sampling error of a p99 from 1,000
 * trials; the bound also covers the asymptotic value for n ≫ 16,384 registers, 2.576 × 1.04 /
 * √16384 ≈ 2.09%. (A p99 of 2% or less would take log2m 15: twice the full bytes.)
 */
export const SKETCH_P99_RELATIVE_ERROR = 0.022;
