import type { VariantResult } from '../report-store.js';
import { byteCompare } from '../shared/row-values.js';

/*
 * An experiment report's answer over any range of whole days from counts that do not grow with its
 * visitors (docs/decisions.md, "The experiment report's kept cells").
 *
 * The report counts, per variant, the visitors exposed in the range, and of them those with a
 * conversion at or after their first exposure in the range. For each (variant, visitor) and each
 * day `e` the visitor was exposed, take `p`, the visitor's previous exposure day (-1 for none),
 * and `c`, the first day with a conversion at or after that day's first exposure (-1 for none).
 * Over whole days [a, b], a visitor's first exposure in the range is its one day with
 * `p < a <= e <= b`, and it converted in the range when `0 <= c <= b`. So counting the visitors
 * per cell `(variant, p, e, c)` answers every range of those days with a sum over the cells: a few
 * tens of thousands of cells at ten million events, where the report reads a row per exposed
 * visitor and day.
 *
 * The days after the cells (yesterday, today's partial day, days not refreshed) come as the
 * tail's exposures and conversions, a row per visitor, and are merged per visitor: the cells say
 * which of those visitors were exposed (and converted) in the cells' part of the range, through
 * their rows kept by visitor.
 */

/** One variant and visitor exposed on a day: the day's first exposure time. */
export interface GapExposure {
  variant: string;
  visitor: number;
  first: number;
}

/** One visitor converting on a day: the day's last conversion time. */
export interface GapConversion {
  visitor: number;
  last: number;
}

/** The tail of a range: a row per variant and visitor exposed, and per visitor converted. */
export interface GapTail {
  /** The first exposure of each variant and visitor in the tail; `visitor` null for a key without an id (then `key`). */
  exposures: ReadonlyArray<{ variant: string; visitor: number | null; key: string | null; first: number }>;
  /** The last conversion of each visitor in the tail, as the exposures. */
  conversions: ReadonlyArray<{ visitor: number | null; key: string | null; last: number }>;
}

/** The cells of one experiment and conversion, and each visitor's rows. */
export interface ExposureGaps {
  readonly variants: readonly string[];
  /** Per cell: its variant (an index of `variants`), p, e, c and the number of visitors. */
  readonly cells: { variant: Uint16Array; p: Int32Array; e: Int32Array; c: Int32Array; n: Int32Array };
  /** The visitors with rows, ascending, and each one's newest row. */
  readonly visitors: Float64Array;
  readonly newest: Int32Array;
  /** Per row: its variant, day `e`, `c`, and the visitor's row before it (-1: none), newest first. */
  readonly rows: { variant: Uint16Array; e: Int32Array; c: Int32Array; previous: Int32Array };
  /** What the arrays hold, in bytes. */
  readonly bytes: number;
}

/** A column of numbers that grows as rows are added. */
class Column<T extends Int32Array | Uint16Array | Float64Array> {
  length = 0;
  constructor(
    public values: T,
    private readonly make: (size: number) => T,
  ) {}
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = this.make(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
  trimmed(): T {
    return this.values.slice(0, this.length) as T;
  }
}

const int32 = () => new Column(new Int32Array(1024), (n) => new Int32Array(n));

/**
 * Builds the cells a day at a time, in ascending order of days, so that a build reads the
 * rollups in small pieces: each day's rows are a few megabytes at most.
 */
export class ExposureGapsBuilder {
  private readonly variantIndex = new Map<string, number>();
  /** Each visitor's newest row. */
  private readonly newest = new Map<number, number>();
  private readonly variant = new Column(new Uint16Array(1024), (n) => new Uint16Array(n));
  private readonly e = int32();
  private readonly p = int32();
  private readonly c = int32();
  private readonly previous = int32();
  /** The first exposure time of each row of the current day (earlier days' are not needed). */
  private readonly firstToday = new Map<number, number>();
  private firstDay = Number.NaN;
  private day = Number.NEGATIVE_INFINITY;

  /** About what the cells built so far will take once finished, in bytes (as {@link ExposureGaps.bytes}, but the cells). */
  get bytes(): number {
    return this.variant.length * 14 + this.newest.size * 12;
  }

  /** How many variants were seen: past {@link MAX_VARIANTS}, the cells are wrong (give them up). */
  get variants(): number {
    return this.variantIndex.size;
  }

  /** Adds a day's exposures (a row per variant and visitor) and conversions (a row per visitor). */
  addDay(day: number, exposures: Iterable<GapExposure>, conversions: Iterable<GapConversion>): void {
    if (day <= this.day) throw new Error('ExposureGapsBuilder: days out of order.');
    if (Number.isNaN(this.firstDay)) this.firstDay = day;
    this.day = day;
    this.firstToday.clear();
    const variant = this.variant;
    for (const row of exposures) {
      let index = this.variantIndex.get(row.variant);
      if (index === undefined) {
        index = this.variantIndex.size;
        this.variantIndex.set(row.variant, index);
      }
      const newest = this.newest.get(row.visitor) ?? -1;
      let p = -1;
      for (let r = newest; r >= 0; r = this.previous.values[r] as number) {
        if (variant.values[r] === index) {
          p = this.e.values[r] as number;
          break;
        }
      }
      const at = variant.length;
      variant.push(index);
      this.e.push(day);
      this.p.push(p);
      this.c.push(-1);
      this.previous.push(newest);
      this.newest.set(row.visitor, at);
      this.firstToday.set(at, row.first);
    }
    // A conversion converts every earlier exposure of its visitor not converted yet, and the day's
    // own exposures at or before it.
    for (const row of conversions) {
      for (let r = this.newest.get(row.visitor) ?? -1; r >= 0; r = this.previous.values[r] as number) {
        if (this.c.values[r] !== -1) continue;
        const first = this.firstToday.get(r);
        if (first === undefined || first <= row.last) this.c.values[r] = day;
      }
    }
  }

  /**
   * The cells of the days added. Asynchronous: at millions of rows it counts them in slices, and
   * the event loop runs between slices.
   */
  async finish(): Promise<ExposureGaps> {
    const rows = this.variant.length;
    // A cell as one number: its days as offsets from the first day (p and c shifted by one for -1).
    const base = Number.isNaN(this.firstDay) ? 0 : this.firstDay;
    const size = (Number.isNaN(this.firstDay) ? 0 : this.day - base) + 2;
    const counts = new Map<number, number>();
    for (let r = 0; r < rows; r++) {
      if (r % SLICE_ROWS === SLICE_ROWS - 1) await nextTurn();
      const p = this.p.values[r] as number;
      const c = this.c.values[r] as number;
      const key = (((this.variant.values[r] as number) * size + (p < 0 ? 0 : p - base + 1)) * size + ((this.e.values[r] as number) - base)) * size + (c < 0 ? 0 : c - base + 1);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const cells = { variant: new Uint16Array(counts.size), p: new Int32Array(counts.size), e: new Int32Array(counts.size), c: new Int32Array(counts.size), n: new Int32Array(counts.size) };
    let i = 0;
    for (const [key, n] of counts) {
      const c = key % size;
      const e = Math.floor(key / size) % size;
      const p = Math.floor(key / size / size) % size;
      cells.variant[i] = Math.floor(key / size / size / size);
      cells.p[i] = p === 0 ? -1 : p + base - 1;
      cells.e[i] = e + base;
      cells.c[i] = c === 0 ? -1 : c + base - 1;
      cells.n[i] = n;
      i++;
    }
    await nextTurn();
    const visitors = Float64Array.from(this.newest.keys()).sort();
    const newest = new Int32Array(visitors.length);
    for (let k = 0; k < visitors.length; k++) {
      if (k % SLICE_ROWS === SLICE_ROWS - 1) await nextTurn();
      newest[k] = this.newest.get(visitors[k] as number) as number;
    }
    return {
      variants: [...this.variantIndex.keys()],
      cells,
      visitors,
      newest,
      rows: { variant: this.variant.trimmed(), e: this.e.trimmed(), c: this.c.trimmed(), previous: this.previous.trimmed() },
      bytes: counts.size * 18 + visitors.length * 12 + rows * 14,
    };
  }
}

/** Variants a build can number (`Uint16Array`). */
export const MAX_VARIANTS = 65_536;
/** Rows counted between two turns of the event loop. */
const SLICE_ROWS = 50_000;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The index of `visitor` in the ascending `visitors`, or -1. */
function indexOf(visitors: Float64Array, visitor: number): number {
  let lo = 0;
  let hi = visitors.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = visitors[mid] as number;
    if (value === visitor) return mid;
    if (value < visitor) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The report over a range whose whole days from `a` are answered by the cells up to day `end`
 * (`a <= end + 1`; no day of the range before `a`) and whose rest, every time after day `end`, is
 * `tail`. `conversions` false: the report asked for no conversion (each variant's conversions null).
 */
export function answerExposureGaps(gaps: ExposureGaps, a: number, end: number, tail: GapTail, conversions: boolean): VariantResult[] {
  const exposed = new Map<string, number>();
  const converted = new Map<string, number>();
  const add = (variant: string, n: number, into: Map<string, number>) => into.set(variant, (into.get(variant) ?? 0) + n);
  const { cells } = gaps;
  for (let i = 0; i < cells.n.length; i++) {
    const e = cells.e[i] as number;
    if ((cells.p[i] as number) >= a || e < a || e > end) continue;
    const variant = gaps.variants[cells.variant[i] as number] as string;
    const n = cells.n[i] as number;
    add(variant, n, exposed);
    const c = cells.c[i] as number;
    if (c >= 0 && c <= end) add(variant, n, converted);
  }
  // The tail's visitors: a visitor of the cells' part keeps its first exposure there (every time
  // of the tail is later), and converts now if it had not and converts in the tail; any other is
  // exposed first in the tail, and converted by a conversion at or after that.
  const tailLast = new Map<number | string, number>();
  for (const row of tail.conversions) {
    const who = row.visitor ?? row.key;
    if (who !== null) tailLast.set(who, Math.max(tailLast.get(who) ?? Number.NEGATIVE_INFINITY, row.last));
  }
  const inCells = new Set<string>();
  const seen = new Set<number>();
  const cellPart = (visitor: number) => {
    if (seen.has(visitor)) return;
    seen.add(visitor);
    const at = indexOf(gaps.visitors, visitor);
    if (at < 0) return;
    // Per variant, the visitor's row with the first day from `a` (rows come newest first).
    const firstFrom = new Map<number, number>();
    const { variant: rowVariant, e: rowDay, c: rowC, previous } = gaps.rows;
    for (let r = gaps.newest[at] as number; r >= 0; r = previous[r] as number) {
      if ((rowDay[r] as number) >= a) firstFrom.set(rowVariant[r] as number, r);
    }
    for (const [index, r] of firstFrom) {
      if ((rowDay[r] as number) > end) continue;
      inCells.add(`${index}:${visitor}`);
      const c = rowC[r] as number;
      if (!(c >= 0 && c <= end) && tailLast.has(visitor)) add(gaps.variants[index] as string, 1, converted);
    }
  };
  for (const row of tail.conversions) if (row.visitor !== null) cellPart(row.visitor);
  for (const row of tail.exposures) if (row.visitor !== null) cellPart(row.visitor);
  const indexOfVariant = new Map(gaps.variants.map((variant, i) => [variant, i]));
  for (const row of tail.exposures) {
    if (row.visitor !== null) {
      const index = indexOfVariant.get(row.variant);
      if (index !== undefined && inCells.has(`${index}:${row.visitor}`)) continue;
    }
    add(row.variant, 1, exposed);
    const last = tailLast.get((row.visitor ?? row.key) as number | string);
    if (last !== undefined && last >= row.first) add(row.variant, 1, converted);
  }
  return [...exposed.keys()].sort(byteCompare).map((variant) => ({
    variant,
    exposures: exposed.get(variant) as number,
    conversions: conversions ? (converted.get(variant) ?? 0) : null,
  }));
}
