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

/** Adds the counts of a counts text (see {@link vitalCountsSql}) to `into`, by value. */
export function addVitalCounts(into: Map<number, number>, counts: string): void {
  let start = 0;
  while (start < counts.length) {
    const colon = counts.indexOf(':', start);
    const comma = counts.indexOf(',', colon);
    const end = comma < 0 ? counts.length : comma;
    const value = valueOf(counts.slice(start, colon));
    into.set(value, (into.get(value) ?? 0) + Number(counts.slice(colon + 1, end)));
    start = end + 1;
  }
}

/**
 * The nearest-rank 75th percentile of counted values: the smallest value whose running count, in
 * value order, reaches rank ⌈0.75 n⌉ (written (3n + 3) / 4 in integer arithmetic, as the SQL over
 * the events computes it); null without samples.
 */
export function nearestRankP75(counts: ReadonlyMap<number, number>): number | null {
  let total = 0;
  for (const n of counts.values()) total += n;
  if (total === 0) return null;
  const rank = Math.floor((3 * total + 3) / 4);
  let upto = 0;
  for (const value of [...counts.keys()].sort((a, b) => a - b)) {
    upto += counts.get(value) ?? 0;
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
  const counts = new Map<string, Partial<Record<VitalKey, Map<number, number>>>>();
  for (const row of rows) {
    const path = String(row.path);
    if (row.metric === null || row.metric === undefined) {
      pages.push({ path, samples: Number(row.samples), rank: Number(row.page_rank) });
      continue;
    }
    let vitals = counts.get(path);
    if (vitals === undefined) counts.set(path, (vitals = {}));
    const into = (vitals[row.metric as VitalKey] ??= new Map<number, number>());
    if (typeof row.counts === 'string') addVitalCounts(into, row.counts);
    else {
      const value = Number(row.value);
      into.set(value, (into.get(value) ?? 0) + Number(row.n));
    }
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
