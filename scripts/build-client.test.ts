/**
 * The size check of `npm run size` / `npm run build:client`: which rows fail it. The budgets
 * themselves are in scripts/build-client.mjs; the build's own output is tested in
 * main/bundle.node.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type SizeRow, overBudget } from './build-client.mjs';

const row = (name: string, gzip: number, budget?: number): SizeRow => ({ name, files: [], bytes: gzip * 3, gzip, ...(budget === undefined ? {} : { budget }) });

describe('overBudget(rows)', () => {
  it('names each budgeted row above its budget, by how many bytes, and nothing else', () => {
    expect(
      overBudget([
        row('main-thread entry', 11_265, 11_264),
        row('worker', 25_600, 25_600),
        row('lazy chunk', 90_000),
      ]),
    ).toEqual(['over budget: main-thread entry is 11265 B gzipped, budget 11264 B (1 B over)']);
  });
});
