// What the report columns cost at ingest, per event, in one process and one run: the extraction
// (server/reports/dimensions.ts) over the ingest benchmark's own bodies (bench/load.ts: realistic
// page, screen and user agent), beside JSON.parse of the same bodies as a yardstick, and beside the
// page and user-agent parses without their memory (what a parse per event would cost).
//
//   node scripts/run-ts.mjs bench/report-columns-cost.ts
import { createDimensionExtractor, pageFactsOf } from '../server/reports/dimensions.js';
import { parseWithUaParser } from '../server/reports/user-agent.js';
import { sampleBodies } from './load.js';

type Wire = { properties: Record<string, string | number | boolean | null>; user_agent: string };
const bodies = sampleBodies(20, 200);
const batches = bodies.map((b) => JSON.parse(b) as Wire[]);
const events = batches.reduce((n, b) => n + b.length, 0);

function timePerEvent(rounds: number, work: () => void): number {
  work(); // warm-up
  const started = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) work();
  return Number(process.hrtime.bigint() - started) / 1000 / (rounds * events);
}

const extractor = createDimensionExtractor();
const rows: Array<[string, number]> = [];
for (let round = 0; round < 3; round++) {
  rows.push(['JSON.parse of the batch bodies', timePerEvent(20, () => bodies.forEach((b) => JSON.parse(b)))]);
  rows.push([
    'report columns (pages and agents remembered)',
    timePerEvent(20, () => batches.forEach((batch) => batch.forEach((e) => extractor.extract(e.properties, e.user_agent)))),
  ]);
  rows.push(['page facts, uncached', timePerEvent(2, () => batches.forEach((batch) => batch.forEach((e) => pageFactsOf(e.properties.page))))]);
  rows.push(['user-agent parse, uncached', timePerEvent(2, () => batches.forEach((batch) => batch.forEach((e) => parseWithUaParser(e.user_agent))))]);
}
console.log(`${events} events in ${bodies.length} batches of 20; µs per event, three rounds:`);
for (const name of new Set(rows.map(([n]) => n))) {
  console.log(`${name.padEnd(34)} ${rows.filter(([n]) => n === name).map(([, us]) => us.toFixed(2).padStart(6)).join(' ')}`);
}
