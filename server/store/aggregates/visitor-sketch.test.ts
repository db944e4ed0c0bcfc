import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type KeyHash,
  SKETCH_EXACT_UP_TO,
  SKETCH_P99_RELATIVE_ERROR,
  VisitorSketch,
  createSketchKit,
  estimateSketchBytes,
  hashKey,
  registerEstimate,
  unionSketchBytes,
  registerOfKey,
  SKETCH_REGISTERS,
  unionWithout,
  withoutKeys,
} from './visitor-sketch.js';

/** Deterministic UUID-shaped keys (what visitor and session ids look like): a seeded xorshift32 stream. */
function makeKeys(count: number, seed: number): string[] {
  let x = seed | 0 || 1;
  const next = (): string => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0).toString(16).padStart(8, '0');
  };
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const a = next();
    const b = next();
    const c = next();
    const d = next();
    keys.push(`${a}-${b.slice(0, 4)}-4${b.slice(5)}-8${c.slice(1, 4)}-${c.slice(4)}${d}`);
  }
  return keys;
}

function sketchOf(keys: readonly string[]): VisitorSketch {
  const sketch = VisitorSketch.empty();
  for (const key of keys) sketch.add(hashKey(key));
  return sketch;
}

const bytesOf = (keys: readonly string[]): Uint8Array => sketchOf(keys).toBytes();
/** Bytes as hex: comparing 12 kB arrays element by element is slow in expect(); strings compare at once. */
const hex = (bytes: Uint8Array | null): string => (bytes === null ? 'null' : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex'));

/** The type in the low 4 bits of byte 0 (the high 4 are the schema version, 1). */
const KIND = { empty: 1, explicit: 2, sparse: 3, full: 4 } as const;
const kindOf = (bytes: Uint8Array): number => (bytes[0] as number) & 15;
const FULL_LENGTH = 3 + 10_240;
const EMPTY_HEX = '118e49';

/** A 64-bit hash as the extension prints it (a signed int64) → {hi, lo}. */
const fromInt64 = (text: string): KeyHash => {
  const u = BigInt.asUintN(64, BigInt(text));
  return { hi: Number(u >> 32n), lo: Number(u & 0xffff_ffffn) };
};
const toUint64 = ({ hi, lo }: KeyHash): bigint => (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);

/**
 * The stored bytes of a set of hashes, written as plainly as possible from the format's
 * definition (docs in visitor-sketch.ts), with BigInt and one bit at a time: the oracle the fast
 * code is held to.
 */
function referenceBytes(hashes: readonly KeyHash[]): Uint8Array {
  const distinct = [...new Set(hashes.map(toUint64))];
  const header = (type: number): number[] => [0x10 | type, 0x8e, 0x49];
  if (distinct.length === 0) return Uint8Array.from(header(KIND.empty));
  if (distinct.length <= 256) {
    const sorted = distinct.map((h) => BigInt.asIntN(64, h)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out = header(KIND.explicit);
    for (const h of sorted) for (let shift = 56n; shift >= 0n; shift -= 8n) out.push(Number((BigInt.asUintN(64, h) >> shift) & 0xffn));
    return Uint8Array.from(out);
  }
  const regs = new Array<number>(16_384).fill(0);
  for (const h of distinct) {
    const index = Number(h & 16_383n);
    let w = h >> 14n;
    let value = 0;
    if (w !== 0n) {
      value = 1;
      while ((w & 1n) === 0n) {
        w >>= 1n;
        value++;
      }
    }
    regs[index] = Math.max(regs[index] as number, Math.min(value, 31));
  }
  const bits: number[] = [];
  const push = (value: number, width: number): void => {
    for (let b = width - 1; b >= 0; b--) bits.push((value >>> b) & 1);
  };
  const filled = regs.filter((r) => r > 0).length;
  const sparse = filled * 19 < 16_384 * 5;
  if (sparse) regs.forEach((r, i) => r > 0 && push((i << 5) | r, 19));
  else regs.forEach((r) => push(r, 5));
  const out = header(sparse ? KIND.sparse : KIND.full);
  for (let i = 0; i < bits.length; i += 8) {
    let byte = 0;
    for (let j = 0; j < 8; j++) byte = (byte << 1) | (bits[i + j] ?? 0);
    out.push(byte);
  }
  return Uint8Array.from(out);
}

/** A seeded Fisher–Yates shuffle. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const pool = makeKeys(120_000, 0x5eed);
// Key sets of every representation, overlapping one another.
const sets = {
  empty: [] as string[],
  one: pool.slice(0, 1),
  small: pool.slice(0, 10),
  atLimit: pool.slice(5, 5 + SKETCH_EXACT_UP_TO),
  sparse: pool.slice(100, 3_100),
  bigSparse: pool.slice(2_000, 6_400),
  dense: pool.slice(10_000, 40_000),
  otherDense: pool.slice(35_000, 75_000),
};
type SetName = keyof typeof sets;
const names = Object.keys(sets) as SetName[];
const md5OfText = (bytes: Uint8Array): string => createHash('md5').update(`\\x${hex(bytes)}`).digest('hex');
const range = (prefix: string, from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);

describe('hashKey', () => {
  it("is the hll extension's hll_hash_text (values printed by PostgreSQL's hll 2.17)", () => {
    // select k, hll_hash_text(k) from (values …) t(k)
    const vectors: Array<[string, string]> = [
      ['', '0'],
      ['a', '-8839064797231613815'],
      ['ab', '-7815133031266706642'],
      ['abc', '-5434086359492102041'],
      ['0198c2d0-aaaa-7bbb-8ccc-ddddeeeeffff', '-425609195144824078'],
      ['ünïcødé 😀', '-1905912915199655167'],
      ['0123456789abcdef', '5467490433528156583'],
      ['0123456789abcdefg', '-8200385122730116642'],
      ['日本語のキー', '-8038583332984955025'],
      ['x'.repeat(100), '289608075098811106'],
    ];
    expect(vectors.map(([key]) => hashKey(key))).toEqual(vectors.map(([, int64]) => fromInt64(int64)));
  });

  it('hashes a lone surrogate as U+FFFD, the bytes a UTF-8 encoder sends for it', () => {
    expect(hashKey('x\ud83d')).toEqual(hashKey('x\ufffd'));
    expect(hashKey('\udc00y')).toEqual(hashKey('\ufffdy'));
    expect(hashKey('😀')).not.toEqual(hashKey('\ufffd\ufffd'));
  });

  it('gives unsigned 32-bit halves, and different hashes for near-identical keys', () => {
    const keys = ['', 'a', 'b', 'a\u0000', 'ab', 'ba', 'visitor-1', 'visitor-2', 'visitor-10', '😀', 'x'.repeat(15), 'x'.repeat(16), 'x'.repeat(17), 'x'.repeat(10_000)];
    const seen = new Set<string>();
    for (const key of keys) {
      const { hi, lo } = hashKey(key);
      for (const half of [hi, lo]) expect(Number.isInteger(half) && half >= 0 && half <= 0xffff_ffff).toBe(true);
      seen.add(`${hi}:${lo}`);
    }
    expect(seen.size).toBe(keys.length);
  });

  it('spreads sequential keys evenly over register indexes and values', () => {
    const perIndexBucket = new Array<number>(64).fill(0);
    let trailingZeroBits = 0;
    const n = 64_000;
    for (let i = 0; i < n; i++) {
      const { lo } = hashKey(`visitor-${i}`);
      perIndexBucket[(lo & 16_383) >>> 8]++;
      const w = lo >>> 14;
      trailingZeroBits += w === 0 ? 18 : 31 - Math.clz32(w & -w);
    }
    // 1,000 expected per bucket, standard deviation ~31: 6 sigma.
    for (const count of perIndexBucket) expect(Math.abs(count - 1_000)).toBeLessThan(190);
    // Mean trailing zeros of a uniform value is ~1.
    expect(trailingZeroBits / n).toBeGreaterThan(0.97);
    expect(trailingZeroBits / n).toBeLessThan(1.03);
  });
});

describe("VisitorSketch: the hll extension's storage format", () => {
  it('gives the bytes PostgreSQL gives for the same keys (hll_add_agg(hll_hash_text(k), 14, 5, 256, 1))', () => {
    expect(hex(VisitorSketch.empty().toBytes())).toBe(EMPTY_HEX);
    // select hll_add(hll_empty(14, 5, 256, 1), hll_hash_text('abc'))
    expect(hex(bytesOf(['abc']))).toBe('128e49b4963f3f3fad7867');
    expect(hex(bytesOf(['b', 'a']))).toBe('128e4985555565f65978897a98a957b1d3d1ee');
    // md5 of the extension's text output of larger sets: 300 keys (sparse), 6,000 (full), and
    // the last sparse and first full sets of one stream (4,311 and 4,312 non-zero registers).
    // select md5(hll_add_agg(hll_hash_text('key-' || i), 14, 5, 256, 1)::text) from generate_series(1, 300) i
    expect(md5OfText(bytesOf(range('key-', 1, 300)))).toBe('bc12bd403a61cb5f7adb81399fd869db');
    expect(md5OfText(bytesOf(range('key-', 1, 6_000)))).toBe('a659d8999757c5f6c87f1fd5cf63ae44');
    const lastSparse = bytesOf(range('boundary-', 0, 5_019));
    const firstFull = bytesOf(range('boundary-', 0, 5_020));
    expect([kindOf(lastSparse), lastSparse.length, kindOf(firstFull), firstFull.length]).toEqual([KIND.sparse, 3 + Math.ceil((4_311 * 19) / 8), KIND.full, FULL_LENGTH]);
    expect(md5OfText(lastSparse)).toBe('21a3b18c884d97f5b7eec0e297df42d2');
    expect(md5OfText(firstFull)).toBe('cb4cc9e52e91f26720ef2f3b65a4d988');
  });

  it("equals a plain reference encoder of the format's definition, for every representation", () => {
    for (const name of names) {
      const keys = sets[name];
      expect(hex(bytesOf(keys)), name).toBe(hex(referenceBytes(keys.map(hashKey))));
    }
  });

  it('sets registers from the low 14 bits (index) and the trailing zeros of the other 50 (value), capped at 31', () => {
    // 256 filler hashes on registers 1000 … 1255 (value 1), then the hashes under test.
    const filler = Array.from({ length: 256 }, (_, i) => ({ hi: 0, lo: (1_000 + i) | (1 << 14) }));
    const probes: KeyHash[] = [
      { hi: 0, lo: 3 }, // w = 0: value 0, no register
      { hi: 0, lo: 4 | (1 << 14) }, // value 1
      { hi: 0, lo: 5 | (1 << 20) }, // value 7
      { hi: 1, lo: 6 }, // w = 2^18: value 19
      { hi: 0x1000, lo: 7 }, // w = 2^30: value 31
      { hi: 0x8000_0000, lo: 8 }, // w = 2^49: 50, capped at 31
      { hi: 0, lo: 9 | (1 << 14) },
      { hi: 0xffff_ffff, lo: 9 | (1 << 16) }, // the larger value of register 9 wins: 3
      { hi: 0, lo: 0 }, // the hash 0: counted while explicit, no register
    ];
    const sketch = VisitorSketch.empty();
    for (const h of [...filler, ...probes]) sketch.add(h);
    const bytes = sketch.toBytes();
    expect(hex(bytes)).toBe(hex(referenceBytes([...filler, ...probes])));
    // Decode the sparse entries: index << 5 | value, 19 bits each.
    let bits = '';
    for (const byte of bytes.subarray(3)) bits += byte.toString(2).padStart(8, '0');
    const entries = new Map<number, number>();
    for (let at = 0; at + 19 <= bits.length; at += 19) {
      const entry = Number.parseInt(bits.slice(at, at + 19), 2);
      entries.set(entry >>> 5, entry & 31);
    }
    expect([3, 4, 5, 6, 7, 8, 9, 0].map((i) => entries.get(i))).toEqual([undefined, 1, 7, 19, 31, 31, 3, undefined]);
    expect(entries.size).toBe(256 + 6);
  });
});

describe('VisitorSketch: the exact range', () => {
  it('counts exactly up to SKETCH_EXACT_UP_TO distinct keys, duplicates ignored, then turns into registers', () => {
    expect(SKETCH_EXACT_UP_TO).toBe(256);
    const sketch = VisitorSketch.empty();
    expect(sketch.estimate()).toBe(0);
    for (let n = 1; n <= SKETCH_EXACT_UP_TO; n++) {
      sketch.add(hashKey(pool[n - 1] as string));
      sketch.add(hashKey(pool[Math.floor(n / 2)] as string));
      expect(sketch.estimate()).toBe(n);
    }
    const bytes = sketch.toBytes();
    expect([bytes[0], bytes[1], bytes[2], bytes.length]).toEqual([0x12, 0x8e, 0x49, 3 + 8 * SKETCH_EXACT_UP_TO]);
    expect(estimateSketchBytes(bytes)).toBe(SKETCH_EXACT_UP_TO);
    sketch.add(hashKey(pool[SKETCH_EXACT_UP_TO] as string));
    expect(kindOf(sketch.toBytes())).toBe(KIND.sparse);
    expect(hex(sketch.toBytes())).toBe(hex(referenceBytes(pool.slice(0, SKETCH_EXACT_UP_TO + 1).map(hashKey))));
  });

  it('stores n keys in 3 + 8n bytes, sorted as signed 64-bit integers; the empty sketch in 3', () => {
    expect(hex(VisitorSketch.empty().toBytes())).toBe(EMPTY_HEX);
    for (const n of [1, 10, 100]) expect(bytesOf(pool.slice(0, n)).length).toBe(3 + 8 * n);
    const sketch = VisitorSketch.empty();
    for (const h of [{ hi: 0x8000_0000, lo: 0 }, { hi: 0, lo: 1 }, { hi: 0xffff_ffff, lo: 0xffff_ffff }, { hi: 0x7fff_ffff, lo: 0 }]) sketch.add(h);
    expect(hex(sketch.toBytes())).toBe(`128e49${'8000000000000000'}${'ffffffffffffffff'}${'0000000000000001'}${'7fffffff00000000'}`);
  });

  it('counts the hash (0, 0) (the empty key) like any other while explicit, and takes signed halves as the same hash', () => {
    const sketch = VisitorSketch.empty();
    sketch.add(hashKey(''));
    sketch.add({ hi: 0, lo: 0 });
    sketch.add({ hi: -1, lo: -2 });
    sketch.add({ hi: 0xffff_ffff, lo: 0xffff_fffe });
    expect(sketch.estimate()).toBe(2);
    const bytes = sketch.toBytes();
    expect(hex(bytes)).toBe('128e49fffffffffffffffe0000000000000000');
    expect(hex(VisitorSketch.fromBytes(bytes).toBytes())).toBe(hex(bytes));
  });
});

describe('VisitorSketch: representations', () => {
  it('goes explicit → sparse → full as keys are added, each smaller than the next', () => {
    const sizes: Array<[number, number, number]> = [];
    const sketch = VisitorSketch.empty();
    for (let n = 1; n <= 40_000; n++) {
      sketch.add(hashKey(pool[n - 1] as string));
      if ([10, 256, 257, 1_000, 4_000, 10_000, 40_000].includes(n)) {
        const bytes = sketch.toBytes();
        sizes.push([n, kindOf(bytes), bytes.length]);
      }
    }
    expect(sizes.map(([n, kind]) => [n, kind])).toEqual([
      [10, KIND.explicit],
      [256, KIND.explicit],
      [257, KIND.sparse],
      [1_000, KIND.sparse],
      [4_000, KIND.sparse],
      [10_000, KIND.full],
      [40_000, KIND.full],
    ]);
    for (const [, kind, length] of sizes) if (kind === KIND.sparse) expect(length).toBeLessThan(FULL_LENGTH);
    expect(sizes.at(-1)?.[2]).toBe(FULL_LENGTH);
    // Past the exact range the sparse form is under a third of the explicit one.
    expect((sizes[2] as [number, number, number])[2]).toBeLessThan(700);
  });

  it('keeps the estimate continuous across both transitions (no jump, no bias bump)', () => {
    const sketch = VisitorSketch.empty();
    let previousKind = KIND.explicit as number;
    let previous = 0;
    let transitions = 0;
    let worst = 0;
    for (let n = 1; n <= 40_000; n++) {
      sketch.add(hashKey(pool[n - 1] as string));
      if (n > 2_000 && n % 10 !== 0) continue;
      const estimate = sketch.estimate();
      // The estimate moves by little from one step to the next (a key, then 10 keys): no jump when
      // the exact count gives way to the registers' estimate.
      expect(Math.abs(estimate - previous - (n > 2_000 ? 10 : 1))).toBeLessThanOrEqual(Math.max(6, 0.01 * n));
      previous = estimate;
      worst = Math.max(worst, Math.abs(estimate - n) / n);
      if (n % 970 === 0 || n === SKETCH_EXACT_UP_TO + 1) {
        const bytes = sketch.toBytes();
        const kind = kindOf(bytes);
        expect(estimateSketchBytes(bytes)).toBe(estimate);
        if (kind !== previousKind) {
          transitions++;
          // Right after each transition the estimate is as good as anywhere.
          expect(Math.abs(estimate - n) / n).toBeLessThan(0.02);
          previousKind = kind;
        }
      }
    }
    expect(transitions).toBe(2);
    // At every step from 1 to 40,000 keys (correlated: one growing set) the error stays within 3%.
    expect(worst).toBeLessThan(0.03);
    // At the edge of the exact range the registers already agree with the exact count.
    const edge = sketchOf(pool.slice(0, SKETCH_EXACT_UP_TO));
    expect(Math.abs(registerEstimate(edge) - SKETCH_EXACT_UP_TO)).toBeLessThanOrEqual(5);
  });

  it('round-trips every representation through toBytes / fromBytes', () => {
    for (const name of names) {
      const bytes = bytesOf(sets[name]);
      const back = VisitorSketch.fromBytes(bytes);
      expect(hex(back.toBytes()), name).toBe(hex(bytes));
      expect(back.estimate(), name).toBe(estimateSketchBytes(bytes));
      expect(sketchOf(sets[name]).estimate(), name).toBe(back.estimate());
    }
    expect(names.map((name) => kindOf(bytesOf(sets[name])))).toEqual([KIND.empty, KIND.explicit, KIND.explicit, KIND.explicit, KIND.sparse, KIND.sparse, KIND.full, KIND.full]);
  });

  it('estimates 100k keys within 5% (fixed keys)', () => {
    const keys = pool.slice(0, 100_000);
    const sketch = sketchOf(keys);
    expect(Math.abs(sketch.estimate() - 100_000) / 100_000).toBeLessThan(0.05);
    // A stream with repeats (each key 3 times, shuffled) gives the very same sketch.
    const repeated = sketchOf(shuffled([...keys, ...keys.slice(0, 50_000), ...keys], 7));
    expect(hex(repeated.toBytes())).toBe(hex(sketch.toBytes()));
  });

  it('documents a p99 bound that is about 2% (measured by sketch-accuracy.ts)', () => {
    expect(SKETCH_P99_RELATIVE_ERROR).toBeGreaterThan(0.015);
    expect(SKETCH_P99_RELATIVE_ERROR).toBeLessThanOrEqual(0.025);
  });
});

describe('union', () => {
  const stored = Object.fromEntries(names.map((name) => [name, bytesOf(sets[name])])) as Record<SetName, Uint8Array>;
  const union = (...parts: SetName[]): Uint8Array => bytesOf([...new Set(parts.flatMap((name) => sets[name]))]);

  it('gives the bytes of the union of the key sets, whatever the order of the keys', () => {
    for (const a of names) {
      for (const b of names) {
        const expected = union(a, b);
        expect(hex(unionSketchBytes(stored[a], stored[b])), `${a} ∪ ${b}`).toBe(hex(expected));
        const merged = VisitorSketch.fromBytes(stored[a]).merge(VisitorSketch.fromBytes(stored[b]));
        expect(hex(merged.toBytes()), `${a}.merge(${b})`).toBe(hex(expected));
        expect(hex(sketchOf(shuffled([...sets[b], ...sets[a]], a.length * 31 + b.length)).toBytes()), `${b} + ${a} shuffled`).toBe(hex(expected));
      }
    }
  });

  it('is commutative, associative and idempotent in bytes', () => {
    for (const a of names) {
      expect(hex(unionSketchBytes(stored[a], stored[a])), `${a} ∪ ${a}`).toBe(hex(stored[a]));
      for (const b of names) {
        const ab = unionSketchBytes(stored[a], stored[b]);
        expect(hex(unionSketchBytes(stored[b], stored[a])), `${b} ∪ ${a}`).toBe(hex(ab));
        expect(hex(unionSketchBytes(ab, stored[b])), `(${a} ∪ ${b}) ∪ ${b}`).toBe(hex(ab));
        for (const c of ['small', 'atLimit', 'sparse', 'dense'] as const) {
          const left = unionSketchBytes(ab, stored[c]);
          const right = unionSketchBytes(stored[a], unionSketchBytes(stored[b], stored[c]));
          expect(hex(right), `${a} ∪ (${b} ∪ ${c})`).toBe(hex(left));
        }
      }
    }
  });

  it('gives the same bytes however many batches a set arrives in (the write path)', () => {
    const keys = pool.slice(0, 20_000);
    const expected = bytesOf(keys);
    for (const batch of [7, 300, 4_000]) {
      let row: Uint8Array | null = null;
      const reference = VisitorSketch.empty();
      for (let i = 0, b = 0; i < keys.length; i += batch, b++) {
        const part = keys.slice(i, i + batch);
        row = unionSketchBytes(row, bytesOf(part));
        for (const key of part) reference.add(hashKey(key));
        if (b % 23 === 0) expect(hex(row), `batches of ${batch}, after ${i + part.length} keys`).toBe(hex(reference.toBytes()));
      }
      expect(hex(row), `batches of ${batch}`).toBe(hex(expected));
    }
  });

  it('takes null as empty', () => {
    expect(hex(unionSketchBytes(null, null))).toBe(EMPTY_HEX);
    for (const name of names) {
      expect(hex(unionSketchBytes(null, stored[name]))).toBe(hex(stored[name]));
      expect(hex(unionSketchBytes(stored[name], null))).toBe(hex(stored[name]));
    }
    expect(estimateSketchBytes(null)).toBe(0);
  });

  it('returns new bytes and reads Buffers at any offset (what SQLite and pg hand over)', () => {
    for (const name of names) {
      const inBuffer = Buffer.concat([Buffer.from([9, 9, 9]), stored[name]]).subarray(3);
      expect(estimateSketchBytes(inBuffer)).toBe(estimateSketchBytes(stored[name]));
      const out = unionSketchBytes(inBuffer, stored.small);
      expect(hex(out)).toBe(hex(union(name, 'small')));
      expect(out.buffer).not.toBe(inBuffer.buffer);
      expect(out.byteLength).toBe(out.buffer.byteLength);
    }
  });

  it('merges full with explicit either way round', () => {
    const fresh = pool.slice(100_000, 100_010);
    const mixed = [...fresh, ...sets.dense.slice(0, 5)];
    const expected = bytesOf([...sets.dense, ...fresh]);
    const dense = VisitorSketch.fromBytes(stored.dense);
    expect(hex(dense.merge(sketchOf(mixed)).toBytes())).toBe(hex(expected));
    expect(hex(sketchOf(mixed).merge(VisitorSketch.fromBytes(stored.dense)).toBytes())).toBe(hex(expected));
    expect(hex(unionSketchBytes(stored.dense, bytesOf(mixed)))).toBe(hex(expected));
    expect(hex(unionSketchBytes(bytesOf(mixed), stored.dense))).toBe(hex(expected));
    expect(estimateSketchBytes(expected)).toBeGreaterThan(estimateSketchBytes(stored.dense) - 1);
  });
});

describe('mergeBytes', () => {
  it('equals merge(fromBytes(bytes)) for every pair of representations', () => {
    for (const a of names) {
      for (const b of names) {
        const stored = bytesOf(sets[b]);
        const viaBytes = sketchOf(sets[a]).mergeBytes(stored);
        const viaSketch = sketchOf(sets[a]).merge(VisitorSketch.fromBytes(stored));
        expect(hex(viaBytes.toBytes()), `${a} ← ${b}`).toBe(hex(viaSketch.toBytes()));
        expect(viaBytes.estimate(), `${a} ← ${b}`).toBe(viaSketch.estimate());
      }
    }
  });

  it('accumulates many rows as a report does (90 days)', () => {
    const days = Array.from({ length: 90 }, (_, d) => pool.slice(d * 1_000, d * 1_000 + 1_500 + (d % 7) * 400));
    const acc = VisitorSketch.empty();
    for (const day of days) acc.mergeBytes(bytesOf(day));
    expect(hex(acc.toBytes())).toBe(hex(bytesOf(days.flat())));
    const distinct = new Set(days.flat()).size;
    expect(Math.abs(acc.estimate() - distinct) / distinct).toBeLessThan(0.05);
  });
});

describe('bytes that are not a sketch', () => {
  const explicit = (...hashes: KeyHash[]): Uint8Array => {
    const out = new Uint8Array(3 + 8 * hashes.length);
    out.set([0x12, 0x8e, 0x49]);
    const view = new DataView(out.buffer);
    hashes.forEach(({ hi, lo }, i) => {
      view.setUint32(3 + 8 * i, hi);
      view.setUint32(7 + 8 * i, lo);
    });
    return out;
  };
  /** Sparse bytes of the given 19-bit entries, as written, with `pad` extra zero bytes. */
  const sparse = (entries: number[], pad = 0): Uint8Array => {
    let bits = entries.map((e) => e.toString(2).padStart(19, '0')).join('');
    bits = bits.padEnd(Math.ceil(bits.length / 8) * 8 + 8 * pad, '0');
    return Uint8Array.from([0x13, 0x8e, 0x49, ...Array.from({ length: bits.length / 8 }, (_, i) => Number.parseInt(bits.slice(8 * i, 8 * i + 8), 2))]);
  };
  const dense = bytesOf(sets.dense);
  const withByte = (bytes: Uint8Array, at: number, byte: number): Uint8Array => {
    const out = bytes.slice();
    out[at] = byte;
    return out;
  };
  const garbage: Array<[string, Uint8Array, RegExp]> = [
    ['no bytes', new Uint8Array(0), /shorter than the 3-byte header/],
    ['another schema version', Uint8Array.of(0x21, 0x8e, 0x49), /schema version 2/],
    ['JSON', new TextEncoder().encode('{"visitors":3}'), /schema version 7/],
    ['the undefined type', Uint8Array.of(0x10, 0x8e, 0x49), /type 0/],
    ['an unknown type', Uint8Array.of(0x17, 0x8e, 0x49), /type 7/],
    ['other registers (log2m 11)', Uint8Array.of(0x11, 0x8b, 0x49), /parameter byte 0x8b/],
    ['other register width (6)', Uint8Array.of(0x11, 0xae, 0x49), /parameter byte 0xae/],
    ['another threshold (auto)', Uint8Array.of(0x11, 0x8e, 0x7f), /parameter byte 0x7f/],
    ['sparse off', Uint8Array.of(0x11, 0x8e, 0x09), /parameter byte 0x09/],
    ['an empty sketch with more bytes', Uint8Array.of(0x11, 0x8e, 0x49, 0), /empty sketch of 4 bytes/],
    ['a partial hash', Uint8Array.of(0x12, 0x8e, 0x49, 0, 0, 0, 1), /whole 8-byte hashes/],
    ['unsorted hashes', explicit({ hi: 2, lo: 0 }, { hi: 1, lo: 5 }), /not strictly ascending/],
    ['hashes sorted as unsigned', explicit({ hi: 1, lo: 0 }, { hi: 0x8000_0000, lo: 0 }), /not strictly ascending/],
    ['a repeated hash', explicit({ hi: 1, lo: 5 }, { hi: 1, lo: 5 }), /not strictly ascending/],
    ['too many hashes', explicit(...Array.from({ length: 257 }, (_, i) => ({ hi: i, lo: 0 }))), /more than 256/],
    ['sparse indexes out of order', sparse([(5 << 5) | 1, (4 << 5) | 1]), /index 4 after 5/],
    ['a repeated sparse index', sparse([(5 << 5) | 1, (5 << 5) | 2]), /index 5 after 5/],
    ['a sparse register of value 0', sparse([(5 << 5) | 0]), /register 5 of value 0/],
    ['sparse padding of 8 bits or more', sparse([(5 << 5) | 1], 1), /bits of padding/],
    ['sparse padding bits set', withByte(sparse([(5 << 5) | 1]), 5, 0xff), /padding bits not zero/],
    ['a short full sketch', dense.subarray(0, 100), /full sketch of 100 bytes/],
    ['a long full sketch', Uint8Array.from([...dense, 0]), /full sketch of 10244 bytes/],
  ];

  it('are refused with a clear error by every reader', () => {
    for (const [what, bytes, reason] of garbage) {
      for (const read of [
        () => VisitorSketch.fromBytes(bytes),
        () => VisitorSketch.empty().mergeBytes(bytes),
        () => estimateSketchBytes(bytes),
        () => unionSketchBytes(bytes, null),
        () => unionSketchBytes(dense, bytes),
        () => unionSketchBytes(bytesOf(sets.small), bytes),
        () => unionSketchBytes(bytesOf(sets.sparse), bytes),
      ]) {
        expect(read, what).toThrow(/^Not a visitor sketch \(hll storage format, log2m 14, regwidth 5, expthresh 256, sparse on\): /);
        expect(read, what).toThrow(reason);
      }
    }
    expect(() => VisitorSketch.fromBytes('abc' as unknown as Uint8Array)).toThrow(/expected bytes, got string/);
  });

  it('leave a sketch that refuses them unchanged', () => {
    for (const name of ['small', 'sparse', 'dense'] as const) {
      const sketch = sketchOf(sets[name]);
      const before = sketch.toBytes();
      for (const [what, bytes] of garbage) {
        expect(() => sketch.mergeBytes(bytes), what).toThrow();
        expect(hex(sketch.toBytes()), `${name} after ${what}`).toBe(hex(before));
      }
    }
  });

  it('accept what the extension reads that this code does not write: an explicit sketch of no hashes, as empty', () => {
    const none = Uint8Array.of(0x12, 0x8e, 0x49);
    expect(estimateSketchBytes(none)).toBe(0);
    expect(hex(VisitorSketch.fromBytes(none).toBytes())).toBe(EMPTY_HEX);
    expect(hex(unionSketchBytes(none, null))).toBe(EMPTY_HEX);
    expect(hex(unionSketchBytes(none, bytesOf(sets.small)))).toBe(hex(bytesOf(sets.small)));
  });
});

describe('unionWithout (an erasure merging a day or a week again)', () => {
  const bytesOf = (keys: readonly string[]): Uint8Array | null => (keys.length === 0 ? null : sketchOf(keys).toBytes());
  const unionOf = (rows: ReadonlyArray<Uint8Array | null>): Uint8Array | null =>
    rows.every((r) => r === null) ? null : rows.reduce<Uint8Array>((a, r) => unionSketchBytes(a, r), VisitorSketch.empty().toBytes());

  /** Finer rows of the given sizes over a shared pool of keys, some keys in several rows; then some keys taken out of some rows. */
  function scenario(seed: number, sizes: readonly number[], erasedCount: number, keepIn: number) {
    const pool = makeKeys(Math.max(...sizes, 1) * 2 + erasedCount, seed);
    const erasedKeys = pool.slice(0, erasedCount);
    const rows = sizes.map((size, i) => {
      const start = (i * 37) % Math.max(1, pool.length - size);
      // Every row holds the erased keys, beside its own.
      return [...new Set([...erasedKeys, ...pool.slice(start, start + size)])];
    });
    const before = rows.map(bytesOf);
    // A key another user's events still carry stays in `keepIn` rows (a shared session id).
    const after = rows.map((keys, i) => bytesOf(i < keepIn ? keys : keys.filter((k) => !erasedKeys.includes(k))));
    // The erased sketches may hold more keys than a row did (an erasure passes every sketch of the
    // user's events to every column's merge): registers no row sets.
    return { previous: unionOf(before), after, erased: [bytesOf(erasedKeys), bytesOf(makeKeys(8, seed + 1_000))] };
  }

  it('gives the bytes of the whole union for every mix of explicit, sparse and full rows', () => {
    const cases: Array<[string, number[], number, number]> = [
      ['24 sparse hours', Array.from({ length: 24 }, (_, i) => 300 + i * 40), 3, 0],
      ['full and sparse', [20_000, 500, 40, 3_000], 5, 0],
      ['7 full days', Array.from({ length: 7 }, () => 25_000), 12, 0],
      ['a key kept in one row', [400, 900, 12_000], 4, 1],
      ['explicit rows only: an exact set again', [100, 120, 60], 2, 0],
      ['explicit rows whose union was registers', [200, 200, 200], 30, 0],
      ['just past the exact range, one key erased', [257], 1, 0],
      ['explicit rows whose union stays past the exact range', [200, 200, 200], 2, 0],
      ['explicit rows whose union falls back into the exact range', [200, 200, 200], 20, 0],
      ['sparse rows and a sparse union', [300, 500, 700], 6, 0],
      ['sparse rows, a key kept in two', [300, 500, 700], 9, 2],
      ['full that turns sparse', [5_200], 400, 0],
      ['every key of a row erased', [0, 5_000], 40, 0],
    ];
    for (const [name, sizes, erasedCount, keepIn] of cases) {
      for (const seed of [3, 17, 91]) {
        const { previous, after, erased } = scenario(seed, sizes, erasedCount, keepIn);
        expect(unionWithout(previous, after, erased), `${name}, seed ${seed}`).toEqual(unionOf(after));
      }
    }
  });

  it('answers null when no finer row is left, and the whole union without a previous row or erased keys', () => {
    expect(unionWithout(sketchOf(makeKeys(500, 4)).toBytes(), [null, null], [sketchOf(['a']).toBytes()])).toBeNull();
    const rows = [sketchOf(makeKeys(600, 5)).toBytes(), null, sketchOf(makeKeys(50, 6)).toBytes()];
    expect(unionWithout(null, rows, [])).toEqual(unionOf(rows));
    expect(unionWithout(unionOf(rows), rows, [null])).toEqual(unionOf(rows));
  });

  it('reads only the erased keys\u2019 registers: any other register of the previous union is kept as it was', () => {
    // A previous union that differs from the finer rows outside the erased keys' registers keeps
    // those registers: the proof that the rest of each finer sketch is not decoded.
    const rows = [sketchOf(makeKeys(3_000, 7)).toBytes()];
    const erasedKeys = makeKeys(3, 8);
    const previous = sketchOf([...makeKeys(3_000, 7), ...erasedKeys, ...makeKeys(2_000, 9)]).toBytes();
    const answer = unionWithout(previous, rows, [sketchOf(erasedKeys).toBytes()]) as Uint8Array;
    expect(answer).not.toEqual(unionOf(rows));
    expect(estimateSketchBytes(answer)).toBeGreaterThan(estimateSketchBytes(rows[0] as Uint8Array) + 1_000);
  });

  it('refuses bytes that are not a sketch', () => {
    const good = sketchOf(makeKeys(400, 10)).toBytes();
    expect(() => unionWithout(good, [Uint8Array.of(1, 2, 3)], [])).toThrow(/schema version/);
    expect(() => unionWithout(Uint8Array.of(0x13, 0x8e), [good], [sketchOf(['x']).toBytes()])).toThrow(/header/);
    // A refusal halfway through the erased sketches leaves nothing behind for the next call.
    const { previous, after, erased } = scenario(5, [300, 500, 700], 6, 0);
    expect(() => unionWithout(previous, after, [...erased, Uint8Array.of(1, 2, 3)])).toThrow(/schema version/);
    expect(unionWithout(previous, after, erased)).toEqual(unionOf(after));
  });
});

describe('withoutKeys (an erasure patching an hour row)', () => {
  const bytesOf = (keys: readonly string[]): Uint8Array | null => (keys.length === 0 ? null : sketchOf(keys).toBytes());

  /**
   * A row of `size` keys and `erasedCount` more taken out of it; `kept` is what an erasure reads:
   * the keys left at the erased keys' registers, and `extra` keys of other registers beside
   * (events read for another column's registers). `shared` erased keys stay, carried by other events.
   */
  function scenario(seed: number, size: number, erasedCount: number, shared = 0, extra = 0) {
    const others = makeKeys(size, seed);
    const erasedKeys = makeKeys(erasedCount, seed + 7_000);
    const left = [...others, ...erasedKeys.slice(0, shared)];
    const registers = new Set(erasedKeys.map(registerOfKey));
    const atRegisters = left.filter((k) => registers.has(registerOfKey(k)));
    const kept = [...atRegisters, ...others.filter((k) => !registers.has(registerOfKey(k))).slice(0, extra)];
    return { previous: bytesOf([...others, ...erasedKeys]), kept: bytesOf(kept), erased: [bytesOf(erasedKeys)], truth: bytesOf(left) };
  }

  it('gives the bytes of a sketch of the keys left, or undefined where it cannot tell them', () => {
    const cases: Array<[string, number, number, number, number, 'bytes' | 'undefined']> = [
      ['an exact set', 40, 3, 0, 5, 'bytes'],
      ['an exact set, a key kept by other events', 40, 3, 1, 0, 'bytes'],
      ['an exact set that empties', 0, 4, 0, 0, 'bytes'],
      ['sparse that stays sparse', 900, 3, 0, 20, 'bytes'],
      ['sparse, a key kept by other events', 900, 3, 2, 0, 'bytes'],
      ['full that stays full', 20_000, 5, 0, 50, 'bytes'],
      ['full that turns sparse', 4_600, 1_000, 0, 0, 'bytes'],
      ['sparse that may fall back into the exact range', 250, 10, 0, 0, 'undefined'],
    ];
    for (const [name, size, erasedCount, shared, extra, expected] of cases) {
      for (const seed of [3, 17, 91]) {
        const { previous, kept, erased, truth } = scenario(seed, size, erasedCount, shared, extra);
        const answer = withoutKeys(previous, kept, erased);
        if (name === 'full that turns sparse') expect([kindOf(previous as Uint8Array), kindOf(truth as Uint8Array)]).toEqual([KIND.full, KIND.sparse]);
        if (expected === 'undefined') expect(answer, `${name}, seed ${seed}`).toBeUndefined();
        else expect(answer === null || answer === undefined ? String(answer) : hex(answer), `${name}, seed ${seed}`).toBe(truth === null ? 'null' : hex(truth));
      }
    }
  });

  it('answers undefined at exactly the exact range of set registers left, and patches one past it', () => {
    // Keys each at a register of its own: as many set registers as keys.
    const distinct = (count: number, seed: number): string[] => {
      const seen = new Set<number>();
      return makeKeys(count * 2, seed).filter((k) => !seen.has(registerOfKey(k)) && seen.add(registerOfKey(k))).slice(0, count);
    };
    for (const left of [SKETCH_EXACT_UP_TO, SKETCH_EXACT_UP_TO + 1]) {
      const keys = distinct(left + 1, 50 + left);
      const [erasedKey, ...kept] = keys as [string, ...string[]];
      expect(new Set(kept.map(registerOfKey)).size).toBe(left);
      const answer = withoutKeys(bytesOf(keys), bytesOf(kept), [bytesOf([erasedKey])]);
      // 256 keys left are an exact set again, which registers cannot tell; 257 set registers are registers.
      if (left === SKETCH_EXACT_UP_TO) expect(answer).toBeUndefined();
      else expect(hex(answer as Uint8Array)).toBe(hex(bytesOf(kept)));
    }
  });

  it('reads kept only at the erased keys\u2019 registers, and keeps a previous sketch\u2019s other registers as they were', () => {
    const others = makeKeys(3_000, 21);
    const erasedKeys = makeKeys(3, 22);
    // Kept without the keys at the erased registers: those registers go to zero, nothing else moves.
    const answer = withoutKeys(bytesOf([...others, ...erasedKeys]), null, [bytesOf(erasedKeys)]) as Uint8Array;
    const registers = new Set(erasedKeys.map(registerOfKey));
    const without = bytesOf(others.filter((k) => !registers.has(registerOfKey(k))));
    expect(hex(answer)).toBe(hex(without));
  });

  it('answers undefined for an erased sketch of full registers or a kept one that cannot be a subset', () => {
    const previous = bytesOf(makeKeys(40, 30));
    expect(withoutKeys(previous, bytesOf(makeKeys(300, 31)), [bytesOf(makeKeys(2, 30))])).toBeUndefined();
    expect(withoutKeys(bytesOf(makeKeys(30_000, 32)), null, [bytesOf(makeKeys(20_000, 33))])).toBeUndefined();
    expect(withoutKeys(null, null, [bytesOf(['a'])])).toBeUndefined();
    expect(withoutKeys(null, null, [null])).toBeNull();
  });

  it('names each key\u2019s register as the sketch sets it', () => {
    expect(SKETCH_REGISTERS).toBe(16_384);
    for (const key of makeKeys(200, 40)) {
      const sketch = sketchOf([key, ...makeKeys(300, 41)]).toBytes();
      const without = sketchOf(makeKeys(300, 41)).toBytes();
      // The key's register is the only one where the two can differ.
      const alone = withoutKeys(sketch, without, [bytesOf([key])]);
      expect(hex(alone as Uint8Array)).toBe(hex(without));
      expect(registerOfKey(key)).toBe(hashKey(key).lo & (SKETCH_REGISTERS - 1));
    }
  });
});

describe('createSketchKit', () => {
  it('is self-contained: built from its source text it makes the same bytes (the SQLite writer thread does this)', () => {
    const kit = new Function(`return (${createSketchKit.toString()})();`)() as ReturnType<typeof createSketchKit>;
    expect(kit.exactUpTo).toBe(SKETCH_EXACT_UP_TO);
    for (const name of names) {
      const fromThread = kit.VisitorSketch.empty();
      for (const key of sets[name]) fromThread.add(kit.hashKey(key));
      const bytes = fromThread.toBytes();
      expect(hex(bytes), name).toBe(hex(bytesOf(sets[name])));
      expect(hex(kit.unionSketchBytes(bytes, bytesOf(sets.small)))).toBe(hex(unionSketchBytes(bytes, bytesOf(sets.small))));
      // A sketch of one kit merges into a sketch of another (through bytes).
      expect(hex(VisitorSketch.empty().merge(fromThread).toBytes())).toBe(hex(bytes));
    }
  });
});
