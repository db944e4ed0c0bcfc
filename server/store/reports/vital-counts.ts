import type { Dialect } from './dialect.js';
import { type PageVitals, VITAL_PROPERTIES } from '../report-store.js';
import { cleanVital } from '../shared/vital-steps.js';

/*
 * A day's counts of the values of one page and vital, as `rollup_vitals` keeps them in one text
 * (`rollup-schema.ts`): `value:count` pairs in value order, comma-separated (`1250:3,1300:1`).
 * The refresh builds the text in SQL; the web vitals report merges the texts of a range's days
 * with the counts of the days read from the events and walks them to the 75th percentile in Node,
 * where grouping the values in SQL was nearly all of the report's time.
 */

/**
 * The counts text of a group of rows with columns `value` (a number) and `n` (its count), one row
 * per value, as an aggregate in SQL. Both databases write a double as text that reads back as the
 * same double (SQLite spells the infinities `Inf` and `-Inf`), so {@link addVitalCounts} gets the
 * very values the SQL rounded.
 */
export const vitalCountsSql = (dialect: Dialect): string => dialect.orderedConcat("value || ':' || n", 'value');

/** A value of a counts text as a number. */
const valueOf = (text: string): number => (text === 'Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text));

/** Powers of ten a double holds exactly. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Counts of values by value (`1000` and `1000.0`, or 0 and -0, are one). */
export type VitalCounts = Map<number, number>;

/**
 * Adds the counts of a counts text (see {@link vitalCountsSql}) to `into`. The web vitals report
 * spends most of its time here (a text per page, vital and day of its range, a few hundred pairs
 * each at thirty million events), so each pair is read as it is walked, with no string of its
 * own: a value of digits and at most one point (every rounded vital but the tiniest) as a whole
 * number over a power of ten, which is the very double the text reads as (both are the correctly
 * rounded quotient); any other (an exponent, the infinities) through `Number`.
 */
export function addVitalCounts(into: VitalCounts, counts: string): void {
  const length = counts.length;
  let start = 0;
  while (start < length) {
    let at = start;
    const negative = counts.charCodeAt(at) === 45;
    if (negative) at++;
    let whole = 0;
    let decimals = -1;
    let plain = true;
    for (; at < length; at++) {
      const c = counts.charCodeAt(at);
      if (c === 58) break;
      if (c === 46 && decimals < 0) decimals = 0;
      else if (c >= 48 && c <= 57) {
        whole = whole * 10 + (c - 48);
        if (decimals >= 0) decimals++;
      } else plain = false;
    }
    let value: number;
    if (plain && at > start + (negative ? 1 : 0) && whole <= Number.MAX_SAFE_INTEGER && decimals <= 22) {
      value = decimals > 0 ? whole / (POWERS_OF_TEN[decimals] as number) : whole;
      if (negative) value = -value;
    } else value = valueOf(counts.slice(start, at));
    let n = 0;
    for (at++; at < length; at++) {
      const digit = counts.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) break;
      n = n * 10 + digit;
    }
    into.set(value, (into.get(value) ?? 0) + n);
    start = at + 1;
  }
}

/** Adds `n` samples of `value` to `into`. */
export function addVitalCount(into: VitalCounts, value: number, n: number): void {
  into.set(value, (into.get(value) ?? 0) + n);
}

/**
 * The nearest-rank 75th percentile of counted values: the smallest value whose running count, in
 * value order, reaches rank ⌈0.75 n⌉ (written (3n + 3) / 4 in integer arithmetic, as the SQL over
 * the events computes it); null without samples.
 */
export function nearestRankP75(counts: VitalCounts): number | null {
  const values: Array<[number, number]> = [];
  let total = 0;
  for (const [value, n] of counts) {
    values.push([value, n]);
    total += n;
  }
  if (total === 0) return null;
  values.sort((a, b) => a[0] - b[0]);
  const rank = Math.floor((3 * total + 3) / 4);
  let upto = 0;
  for (const [value, n] of values) {
    upto += n;
    if (upto >= rank) return value;
  }
  return null;
}

/** A vital of the report, by its key. */
type VitalKey = keyof typeof VITAL_PROPERTIES;

/**
 * The report's answer from the rows of `vitalsCountsSql` (`rollup-queries.ts`): each page in its
 * rank, with the 75th percentile of each vital over the merged counts of its rows.
 */
export function pageVitalsFromCounts(rows: ReadonlyArray<Record<string, unknown>>): PageVitals[] {
  const pages: Array<{ path: string; samples: number; rank: number }> = [];
  const counts = new Map<string, Partial<Record<VitalKey, VitalCounts>>>();
  for (const row of rows) {
    const path = String(row.path);
    if (row.metric === null || row.metric === undefined) {
      pages.push({ path, samples: Number(row.samples), rank: Number(row.page_rank) });
      continue;
    }
    let vitals = counts.get(path);
    if (vitals === undefined) counts.set(path, (vitals = {}));
    const into = (vitals[row.metric as VitalKey] ??= new Map());
    if (typeof row.counts === 'string') addVitalCounts(into, row.counts);
    else addVitalCount(into, Number(row.value), Number(row.n));
  }
  return pages
    .sort((a, b) => a.rank - b.rank)
    .map(({ path, samples }) => {
      const vitals = counts.get(path);
      const p75 = (key: VitalKey): number | null => {
        const value = vitals?.[key] === undefined ? null : nearestRankP75(vitals[key]);
        return value === null ? null : cleanVital(value);
      };
      return { path, samples, lcp: p75('lcp'), inp: p75('inp'), cls: p75('cls'), fcp: p75('fcp') };
    });
}
