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

const KIND = { explicit: 1, sparse: 2, dense: 3 } as const;
const DENSE_LENGTH = 2 + 12_288;

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
  full: pool.slice(5, 5 + SKETCH_EXACT_UP_TO),
  sparse: pool.slice(100, 3_100),
  bigSparse: pool.slice(2_000, 12_000),
  dense: pool.slice(10_000, 40_000),
  otherDense: pool.slice(35_000, 75_000),
};
type SetName = keyof typeof sets;
const names = Object.keys(sets) as SetName[];

describe('hashKey', () => {
  it('is pinned: stored sketches hold these hashes, so any change needs a new format version', () => {
    expect(['', 'a', 'ab', '0198c2d0-aaaa-7bbb-8ccc-ddddeeeeffff', 'ünïcødé 😀'].map(hashKey)).toEqual([
      { hi: 0x52ed931b, lo: 0xc93f2ea8 },
      { hi: 0x206d5826, lo: 0xdfa145a5 },
      { hi: 0x236f67f5, lo: 0x26eea6d5 },
      { hi: 0x3fecb57e, lo: 0x2c80e883 },
      { hi: 0x3a29e6e7, lo: 0xca5b5c0e },
    ]);
  });

  it('gives unsigned 32-bit halves, and different hashes for near-identical keys', () => {
    const keys = ['', 'a', 'b', 'a\u0000', 'ab', 'ba', 'visitor-1', 'visitor-2', 'visitor-10', '😀', '\ud83d'];
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
    let leadingZeroBits = 0;
    const n = 64_000;
    for (let i = 0; i < n; i++) {
      const { hi, lo } = hashKey(`visitor-${i}`);
      perIndexBucket[hi >>> 26]++;
      leadingZeroBits += Math.clz32(lo);
    }
    // 1,000 expected per bucket, standard deviation ~31: 6 sigma.
    for (const count of perIndexBucket) expect(Math.abs(count - 1_000)).toBeLessThan(190);
    // Mean leading zeros of a uniform 32-bit value is ~1.
    expect(leadingZeroBits / n).toBeGreaterThan(0.97);
    expect(leadingZeroBits / n).toBeLessThan(1.03);
  });
});

describe('VisitorSketch: the exact range', () => {
  it('counts exactly up to SKETCH_EXACT_UP_TO distinct keys, duplicates ignored', () => {
    expect(SKETCH_EXACT_UP_TO).toBe(256);
    const sketch = VisitorSketch.empty();
    expect(sketch.estimate()).toBe(0);
    for (let n = 1; n <= SKETCH_EXACT_UP_TO; n++) {
      sketch.add(hashKey(pool[n - 1] as string));
      sketch.add(hashKey(pool[Math.floor(n / 2)] as string));
      expect(sketch.estimate()).toBe(n);
    }
    const bytes = sketch.toBytes();
    expect([bytes[0], bytes[1], bytes.length]).toEqual([1, KIND.explicit, 2 + 8 * SKETCH_EXACT_UP_TO]);
    expect(estimateSketchBytes(bytes)).toBe(SKETCH_EXACT_UP_TO);
    sketch.add(hashKey(pool[SKETCH_EXACT_UP_TO] as string));
    expect(sketch.toBytes()[1]).toBe(KIND.sparse);
  });

  it('stores n keys in 2 + 8n bytes, the empty sketch in 2', () => {
    expect(Array.from(VisitorSketch.empty().toBytes())).toEqual([1, KIND.explicit]);
    for (const n of [1, 10, 100]) expect(bytesOf(pool.slice(0, n)).length).toBe(2 + 8 * n);
  });

  it('counts the hash (0, 0) like any other, and takes signed halves as the same hash', () => {
    const sketch = VisitorSketch.empty();
    sketch.add({ hi: 0, lo: 0 });
    sketch.add({ hi: 0, lo: 0 });
    sketch.add({ hi: -1, lo: -2 });
    sketch.add({ hi: 0xffff_ffff, lo: 0xffff_fffe });
    expect(sketch.estimate()).toBe(2);
    const bytes = sketch.toBytes();
    expect(Array.from(bytes.subarray(2, 10))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(hex(VisitorSketch.fromBytes(bytes).toBytes())).toBe(hex(bytes));
    // Past the exact range the zero hash sets register 0 to its largest value.
    for (const key of pool.slice(0, SKETCH_EXACT_UP_TO)) sketch.add(hashKey(key));
    const sparse = sketch.toBytes();
    expect([sparse[1], sparse[2]]).toEqual([KIND.sparse, 33]);
  });
});

describe('VisitorSketch: representations', () => {
  it('goes explicit → sparse → dense as keys are added, each smaller than the next', () => {
    const sizes: Array<[number, number, number]> = [];
    const sketch = VisitorSketch.empty();
    for (let n = 1; n <= 40_000; n++) {
      sketch.add(hashKey(pool[n - 1] as string));
      if ([10, 256, 257, 1_000, 10_000, 40_000].includes(n)) {
        const bytes = sketch.toBytes();
        sizes.push([n, bytes[1] as number, bytes.length]);
      }
    }
    expect(sizes.map(([n, kind]) => [n, kind])).toEqual([
      [10, KIND.explicit],
      [256, KIND.explicit],
      [257, KIND.sparse],
      [1_000, KIND.sparse],
      [10_000, KIND.sparse],
      [40_000, KIND.dense],
    ]);
    for (const [, kind, length] of sizes) if (kind === KIND.sparse) expect(length).toBeLessThan(DENSE_LENGTH);
    expect(sizes.at(-1)?.[2]).toBe(DENSE_LENGTH);
    // Past the exact range the sparse form is about a quarter of the explicit one.
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
        const kind = bytes[1] as number;
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
    expect([sets.full, sets.sparse, sets.bigSparse, sets.dense].map((keys) => bytesOf(keys)[1])).toEqual([KIND.explicit, KIND.sparse, KIND.sparse, KIND.dense]);
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
        for (const c of ['small', 'full', 'sparse', 'dense'] as const) {
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
    expect(Array.from(unionSketchBytes(null, null))).toEqual([1, KIND.explicit]);
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

  it('merges dense with explicit either way round', () => {
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
    const out = new Uint8Array(2 + 8 * hashes.length);
    out.set([1, KIND.explicit]);
    const view = new DataView(out.buffer);
    hashes.forEach(({ hi, lo }, i) => {
      view.setUint32(2 + 8 * i, hi);
      view.setUint32(6 + 8 * i, lo);
    });
    return out;
  };
  const dense = bytesOf(sets.dense);
  const denseWith = (at: number, byte: number): Uint8Array => {
    const out = dense.slice();
    out[at] = byte;
    return out;
  };
  const garbage: Array<[string, Uint8Array, RegExp]> = [
    ['no bytes', new Uint8Array(0), /shorter than the header/],
    ['another version', Uint8Array.of(2, 1), /version byte 2/],
    ['JSON', new TextEncoder().encode('{"visitors":3}'), /version byte 123/],
    ['an unknown kind', Uint8Array.of(1, 7), /kind byte 7/],
    ['a partial hash', Uint8Array.of(1, 1, 0, 0, 0, 1), /whole 8-byte hashes/],
    ['unsorted hashes', explicit({ hi: 2, lo: 0 }, { hi: 1, lo: 5 }), /not strictly ascending/],
    ['a repeated hash', explicit({ hi: 1, lo: 5 }, { hi: 1, lo: 5 }), /not strictly ascending/],
    ['too many hashes', explicit(...Array.from({ length: 257 }, (_, i) => ({ hi: i, lo: 0 }))), /more than 256/],
    ['a cut-short sparse entry', Uint8Array.of(1, 2, 0x81), /cut short/],
    ['an overlong sparse entry', Uint8Array.of(1, 2, 0x81, 0x00), /overlong/],
    ['a 4-byte sparse entry', Uint8Array.of(1, 2, 0x81, 0x80, 0x80, 0x01), /longer than 3 bytes/],
    ['a zero register', Uint8Array.of(1, 2, 0x40), /register value 0/],
    ['a register value of 34', Uint8Array.of(1, 2, 34), /register value 34/],
    ['a register past the last', Uint8Array.of(1, 2, 0x81, 0x80, 0x7f, 0x81, 0x80, 0x7f), /register index/],
    ['a short dense sketch', dense.subarray(0, 100), /dense sketch of 100 bytes/],
    ['a dense register of 63', denseWith(2, 0xfc), /above 33/],
    ['a dense register of 34 (last)', denseWith(DENSE_LENGTH - 1, 34), /above 33/],
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
      ]) {
        expect(read, what).toThrow(/^Not a visitor sketch of format version 1: /);
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
