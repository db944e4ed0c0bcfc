// The declaration files that a package's entries reach, for both builds: tsc emits a declaration
// for every file an entry reaches at all, internals included; only those that the entries'
// declarations reach through their own imports ship, so a user's compiler loads nothing else.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * The declaration files `entries` reach by relative imports and re-exports (and `import()` types),
 * the entries included, relative to `dir`, sorted.
 * @param {string} dir where tsc emitted the declarations
 * @param {string[]} entries the entries' declarations, relative to `dir` (e.g. 'main/index.d.ts')
 */
export function reachableDeclarations(dir, entries) {
  const reached = new Set();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (reached.has(file)) continue;
    const path = join(dir, file);
    if (!existsSync(path)) throw new Error(`${file} is imported by the package's declarations but tsc did not emit it`);
    reached.add(file);
    // Comments may quote code; only the code counts.
    const code = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const [, specifier] of code.matchAll(/(?:\bfrom|\bimport\()\s*['"](\.[^'"]+)['"]/g)) {
      pending.push(posix.join(posix.dirname(file), specifier.replace(/\.js$/, '.d.ts')));
    }
  }
  return [...reached].sort();
}
