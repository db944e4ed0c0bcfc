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

/**
 * Counts of values by their text: a value is read as a number only once per distinct text, at
 * the walk, rather than once per day it was counted in. One number may come under two texts
 * (SQLite writes a real 1000 as `1000.0`, an integer as `1000`): the walk adds them up as one.
 */
export type VitalCounts = Map<string, number>;

/** Adds the counts of a counts text (see {@link vitalCountsSql}) to `into`. */
export function addVitalCounts(into: VitalCounts, counts: string): void {
  let start = 0;
  while (start < counts.length) {
    const colon = counts.indexOf(':', start);
    const comma = counts.indexOf(',', colon);
    const end = comma < 0 ? counts.length : comma;
    const value = counts.slice(start, colon);
    into.set(value, (into.get(value) ?? 0) + Number(counts.slice(colon + 1, end)));
    start = end + 1;
  }
}

/** Adds `n` samples of `value` to `into`. */
export function addVitalCount(into: VitalCounts, value: number, n: number): void {
  const text = String(value);
  into.set(text, (into.get(text) ?? 0) + n);
}

/**
 * The nearest-rank 75th percentile of counted values: the smallest value whose running count, in
 * value order, reaches rank ⌈0.75 n⌉ (written (3n + 3) / 4 in integer arithmetic, as the SQL over
 * the events computes it); null without samples.
 */
export function nearestRankP75(counts: VitalCounts): number | null {
  const values: Array<[number, number]> = [];
  let total = 0;
  for (const [text, n] of counts) {
    values.push([valueOf(text), n]);
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
