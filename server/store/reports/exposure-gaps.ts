import type { VariantResult } from '../report-store.js';

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

/** One variant, visitor and day of exposures: the day's first exposure time. */
export interface GapExposure {
  variant: string;
  visitor: number;
  day: number;
  first: number;
}

/** One visitor and day of conversions: the day's last conversion time. */
export interface GapConversion {
  visitor: number;
  day: number;
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
  /** The visitors with rows, ascending; the rows of `visitors[i]` are `starts[i]` to `starts[i + 1]`. */
  readonly visitors: Float64Array;
  readonly starts: Int32Array;
  /** Per row, in order of visitor, variant and day: its variant, day `e` and `c`. */
  readonly rows: { variant: Uint16Array; e: Int32Array; c: Int32Array };
  /** What the arrays hold, in bytes. */
  readonly bytes: number;
}

/**
 * Builds the cells from a visitor's exposures and conversions, both in order of visitor (then
 * variant and day, and day). Conversions of visitors never exposed may be in `conversions`; they
 * are passed over.
 */
export function buildExposureGaps(exposures: Iterable<GapExposure>, conversions: readonly GapConversion[]): ExposureGaps {
  const variantIndex = new Map<string, number>();
  const visitors: number[] = [];
  const starts: number[] = [];
  const rowVariant: number[] = [];
  const rowDay: number[] = [];
  const rowC: number[] = [];
  const cellCounts = new Map<string, number>();
  let at = 0; // the first conversion of the current visitor or later
  let visitor = Number.NaN;
  let variant = -1;
  let previous = -1;
  for (const row of exposures) {
    if (row.visitor !== visitor) {
      if (row.visitor < visitor) throw new Error('buildExposureGaps: exposures out of visitor order.');
      visitor = row.visitor;
      variant = -1;
      visitors.push(visitor);
      starts.push(rowDay.length);
      while (at < conversions.length && (conversions[at] as GapConversion).visitor < visitor) at++;
    }
    let index = variantIndex.get(row.variant);
    if (index === undefined) {
      index = variantIndex.size;
      variantIndex.set(row.variant, index);
    }
    if (index !== variant) {
      variant = index;
      previous = -1;
    }
    let c = -1;
    for (let k = at; k < conversions.length; k++) {
      const conversion = conversions[k] as GapConversion;
      if (conversion.visitor !== visitor) break;
      if (conversion.day > row.day || (conversion.day === row.day && conversion.last >= row.first)) {
        c = conversion.day;
        break;
      }
    }
    rowVariant.push(index);
    rowDay.push(row.day);
    rowC.push(c);
    const key = `${index},${previous},${row.day},${c}`;
    cellCounts.set(key, (cellCounts.get(key) ?? 0) + 1);
    previous = row.day;
  }
  starts.push(rowDay.length);
  const size = cellCounts.size;
  const cells = { variant: new Uint16Array(size), p: new Int32Array(size), e: new Int32Array(size), c: new Int32Array(size), n: new Int32Array(size) };
  let i = 0;
  for (const [key, n] of cellCounts) {
    const [v, p, e, c] = key.split(',').map(Number) as [number, number, number, number];
    cells.variant[i] = v;
    cells.p[i] = p;
    cells.e[i] = e;
    cells.c[i] = c;
    cells.n[i] = n;
    i++;
  }
  const rows = { variant: Uint16Array.from(rowVariant), e: Int32Array.from(rowDay), c: Int32Array.from(rowC) };
  return {
    variants: [...variantIndex.keys()],
    cells,
    visitors: Float64Array.from(visitors),
    starts: Int32Array.from(starts),
    rows,
    bytes: size * 18 + visitors.length * 12 + rowDay.length * 10,
  };
}

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

/** Byte order of UTF-8 text, as the report's `ORDER BY` of variants. */
const byBytes = (x: string, y: string): number => Buffer.compare(Buffer.from(x), Buffer.from(y));

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
    const last = gaps.starts[at + 1] as number;
    const { variant: rowVariant, e: rowDay, c: rowC } = gaps.rows;
    for (let row = gaps.starts[at] as number; row < last; ) {
      const index = rowVariant[row] as number;
      let next = row;
      while (next < last && rowVariant[next] === index) next++;
      let first = row;
      while (first < next && (rowDay[first] as number) < a) first++;
      row = next;
      if (first === next || (rowDay[first] as number) > end) continue;
      inCells.add(`${index}:${visitor}`);
      const c = rowC[first] as number;
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
  return [...exposed.keys()].sort(byBytes).map((variant) => ({
    variant,
    exposures: exposed.get(variant) as number,
    conversions: conversions ? (converted.get(variant) ?? 0) : null,
  }));
}
