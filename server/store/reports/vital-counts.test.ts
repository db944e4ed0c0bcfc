import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_DIALECT, Values } from './dialect.js';
import { type DayPlan, vitalsCountsSql } from './rollup-queries.js';
import { addVitalCount, addVitalCounts, nearestRankP75, vitalCountsSql } from './vital-counts.js';
import { VITAL_PROPERTIES, type ReportQuery } from '../report-store.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

/*
 * The counts text of `rollup_vitals` read back in Node: the texts SQLite writes, merged over days
 * and with counts of single values, walk to the nearest-rank 75th percentile of the samples
 * themselves, for any doubles (negatives and zero, which the rounding passes as they are, and
 * the infinities). The report's numbers over stored events are the contracts' (`rollup.contract.ts`,
 * `report-store.contract.ts`).
 */

const dir = mkdtempSync(join(tmpdir(), 'sa-vital-counts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The value at rank ⌈0.75 n⌉ of the sorted samples. */
const directP75 = (samples: number[]): number | null => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted.length === 0 ? null : (sorted[Math.ceil(0.75 * sorted.length) - 1] as number);
};

describe('vital counts', () => {
  it("walks SQLite's counts texts of several days and single counts to the samples' own p75", () => {
    const db = new Database(':memory:');
    try {
      const counts = db.prepare(`SELECT ${vitalCountsSql(SQLITE_DIALECT)} AS counts FROM (
        SELECT value, COUNT(*) AS n FROM (SELECT value FROM json_each(?)) GROUP BY value)`);
      // Values days share, and any double; each written to JSON as an event carries it: as an
      // integer or with a fraction (SQLite keeps them as an integer or a real: `1000` or `1000.0`),
      // the infinities as numbers too large for a double.
      const value = fc.oneof(
        fc.constantFrom(0, -0, 1000, 1000.5, -2.5, 0.0615, 1e-300, Infinity, -Infinity),
        fc.double({ noNaN: true }),
        fc.integer({ min: -5, max: 5 }),
      );
      const sample = fc.tuple(value, fc.boolean());
      const json = ([v, real]: [number, boolean]): string =>
        v === Infinity ? '1e400' : v === -Infinity ? '-1e400' : real && Number.isInteger(v) && Math.abs(v) < 1e15 ? `${v}.0` : JSON.stringify(v);
      fc.assert(
        fc.property(fc.array(fc.array(sample, { maxLength: 12 }), { minLength: 1, maxLength: 6 }), fc.array(value, { maxLength: 6 }), (days, single) => {
          const merged = new Map<number, number>();
          for (const day of days) {
            const text = (counts.get(`[${day.map(json).join(',')}]`) as { counts: string | null }).counts;
            if (text !== null) addVitalCounts(merged, text);
          }
          for (const v of single) addVitalCount(merged, v, 1);
          const samples = [...days.flat().map(([v]) => v), ...single];
          const p75 = nearestRankP75(merged);
          // -0 and 0 are one value to both (JSON writes -0 as 0).
          expect(p75 === null ? null : p75 + 0).toEqual(directP75(samples.map((v) => v + 0)));
        }),
        { numRuns: 300 },
      );
    } finally {
      db.close();
    }
  });

  it('reads the infinities as SQLite spells them, and one number under two texts as one value', () => {
    const counts = new Map<number, number>();
    addVitalCounts(counts, '-Inf:1,1000:2,Inf:1');
    addVitalCounts(counts, '1000.0:1');
    expect(nearestRankP75(counts)).toBe(1000);
    addVitalCounts(counts, 'Inf:3');
    expect(nearestRankP75(counts)).toBe(Infinity);
    expect(nearestRankP75(new Map())).toBeNull();
  });

  it('reads each value as the double its text is, walked or through Number: points, signs, exponents, long and odd texts', () => {
    const read = (text: string) => {
      const counts = new Map<number, number>();
      addVitalCounts(counts, `${text}:7,${text}:2`);
      return [...counts];
    };
    // A Map holds -0 as 0.
    const expected = (text: string) => [[(text === 'Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text)) + 0, 9]];
    for (const text of ['0', '-0', '-0.0', '1000', '1000.0', '0.0615', '-2.5', '1.5e-05', '1e+21', 'Inf', '-Inf', '12345678901234567890', '0.1234567890123456789012345', '.5', '5.', '-', '', 'x1']) {
      expect(read(text), text).toEqual(expected(text));
    }
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(read(String(value))).toEqual(expected(String(value)));
      }),
      { numRuns: 2000 },
    );
    // Every whole number a double holds exactly, over every power of ten it holds exactly, either sign.
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }), fc.integer({ min: 0, max: 22 }), fc.boolean(), (whole, decimals, negative) => {
        const digits = whole.toString().padStart(decimals + 1, '0');
        const text = (negative ? '-' : '') + (decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`);
        expect(read(text), text).toEqual(expected(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the web vitals report on SQLite', () => {
  it('reads rollup_vitals through its key: the pages from the rows of vital \'\', each vital\'s rows by range of days', async () => {
    const path = join(dir, 'plan.db');
    const store = createSqliteStore({ path });
    await store.init();
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      const q: ReportQuery = { projectId: 'p', from: 0, to: 90 * 86_400_000 + 5, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const plan: DayPlan = { days: { first: 0, end: 90, dirty: [40] }, raw: [[40 * 86_400_000, 41 * 86_400_000], [90 * 86_400_000, q.to]] };
      const v = new Values(SQLITE_DIALECT);
      const where = (from: number, to: number) => `project_id = ${v.add('p')} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)} AND is_bot = 0`;
      const sql = vitalsCountsSql(q, plan, { dialect: SQLITE_DIALECT, add: (x) => v.add(x), rawWhere: where, visitor: 'visitor_id' }, VITAL_PROPERTIES, 10);
      const details = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...v.list) as Array<{ detail: string }>).map((row) => row.detail);
      const vitals = details.filter((detail) => detail.includes('rollup_vitals'));
      expect(vitals).toHaveLength(2);
      for (const detail of vitals) expect(detail).toMatch(/^SEARCH rollup_vitals USING PRIMARY KEY \(project_id=\? AND metric=\? AND day>\? AND day<\?\)/);
    } finally {
      db.close();
    }
  });
});
