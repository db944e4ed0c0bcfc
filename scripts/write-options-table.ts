// Writes the CLI's environment-variable table into docs/deploy.md, between
// `<!-- options:start -->` and `<!-- options:end -->`, from the CLI's own option list
// (server/cli-options.ts). server/deploy.test.ts fails while the two differ.
//
//   node scripts/run-ts.mjs scripts/write-options-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { environmentTable } from '../server/cli-options.js';

const file = join(process.cwd(), 'docs', 'deploy.md');
const text = readFileSync(file, 'utf8');
const block = /<!-- options:start -->[\s\S]*?<!-- options:end -->/;
if (!block.test(text)) throw new Error(`${file} has no <!-- options:start --> … <!-- options:end --> block`);
const next = text.replace(block, () => `<!-- options:start -->\n${environmentTable()}\n<!-- options:end -->`);
writeFileSync(file, next);
