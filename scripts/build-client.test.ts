/**
 * The size check of `npm run size` / `npm run build:client`: which rows fail it, and the chunk
 * names after contents alone. The budgets themselves are in scripts/build-client.mjs; the build's
 * own output is tested in main/bundle.node.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type SizeRow, contentNames, overBudget } from './build-client.mjs';

/** A build as esbuild writes it: entries, chunks naming each other, source maps; `tag` changes esbuild's hashes only. */
function built(tag: string, leafText = 'export const leaf = 1;'): Map<string, string> {
  const n = (base: string) => `${base}-${tag}${base.toUpperCase().slice(0, 8 - tag.length).padEnd(8 - tag.length, 'X')}.js`;
  const [leaf, mid, a, b] = [n('leaf'), n('mid'), n('cyca'), n('cycb')];
  return new Map([
    ['index.js', `import("./${mid}");import("./${a}");
//# sourceMappingURL=index.js.map`],
    [leaf, `${leafText}
//# sourceMappingURL=${leaf}.map`],
    [`${leaf}.map`, `{"file":"${leaf}"}`],
    [mid, `import{leaf}from"./${leaf}";export const mid=leaf;`],
    [a, `import("./${b}");export const a=1;`],
    [b, `import("./${a}");export const b=2;`],
  ]);
}

const row = (name: string, gzip: number, budget?: number): SizeRow => ({ name, files: [], bytes: gzip * 3, gzip, ...(budget === undefined ? {} : { budget }) });

describe('contentNames(files)', () => {
  it('gives two builds of the same code the same names whatever esbuild hashed, references and maps included', () => {
    const one = contentNames(built('AB'));
    const two = contentNames(built('CD'));
    expect([...one.files]).toEqual([...two.files]);
    const names = [...one.files.keys()];
    expect(names.filter((name) => /-[A-Z2-7]{8}\.js$/.test(name))).toHaveLength(4);
    // Every reference points at a file of the build.
    for (const text of one.files.values()) for (const [, ref] of text.matchAll(/\.\/([\w-]+\.js(?:\.map)?)/g)) expect(names).toContain(ref);
    expect(one.files.get(`${one.names.get([...built('AB').keys()][1]!)!}.map`)).toContain(one.names.get([...built('AB').keys()][1]!)!);
  });

  it('renames a changed chunk and every chunk that leads to it, and nothing else', () => {
    const before = contentNames(built('AB'));
    const after = contentNames(built('AB', 'export const leaf = 2;'));
    const changed = [...before.names].filter(([old]) => after.names.get(old) !== before.names.get(old)).map(([old]) => old.replace(/-.*/, ''));
    expect(changed.sort()).toEqual(['leaf', 'mid']);
  });

  it('names the chunks of a cycle apart, stably', () => {
    const { names } = contentNames(built('AB'));
    const cycle = [...names].filter(([old]) => /^cyc/.test(old)).map(([, name]) => name);
    expect(new Set(cycle).size).toBe(2);
    expect(contentNames(built('EF')).names.size).toBe(names.size);
  });
});

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
