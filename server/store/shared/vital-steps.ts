/*
 * The web vitals report's values, rounded at their third significant digit to a step of 5
 * (1,234 ms → 1,250; 0.0613 → 0.0615): the 75th percentile it answers is the rounded value of the
 * sample at its rank, within 2.5% of the exact one (docs/protocol.md, "Which numbers are
 * estimates"). Rounding before counting is what keeps the daily counts of values
 * (`rollup_vitals`) to a few hundred rows per page and vital however many distinct milliseconds
 * the pages report; and since the rounding never reorders values, the rank's sample rounded is the
 * percentile of the rounded samples, whether a report reads those counts or the events.
 *
 * One SQL text for SQLite, PostgreSQL and ClickHouse: `log10`, `power` and `floor` mean the same in
 * all three (rounding half up through `floor(x + 0.5)`, as PostgreSQL's `round` of a double rounds
 * half to even).
 */

/** The step of a positive value `v`, as SQL: 5 at its third significant digit. */
const stepSql = (v: string): string => `(5 * power(10, floor(log10(${v})) - 2))`;

/** A vital's value rounded as the report counts it, as SQL over an expression read once per use (zero, negatives and null pass as they are). */
export const vitalStepSql = (v: string): string => `CASE WHEN ${v} > 0 THEN floor(${v} / ${stepSql(v)} + 0.5) * ${stepSql(v)} ELSE ${v} END`;

/** {@link vitalStepSql} in JavaScript, for checking answers. */
export function vitalStep(v: number): number {
  if (!(v > 0)) return v;
  const step = 5 * 10 ** (Math.floor(Math.log10(v)) - 2);
  return cleanVital(Math.floor(v / step + 0.5) * step);
}

/** A rounded value as the answer gives it: without the binary fraction's tail (0.225, not 0.22500000000000003). */
export const cleanVital = (v: number): number => Number(v.toPrecision(12));
