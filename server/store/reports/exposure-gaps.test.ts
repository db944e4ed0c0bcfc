import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { VariantResult } from '../report-store.js';
import { ExposureGapsBuilder, type GapConversion, type GapExposure, type GapTail, answerExposureGaps } from './exposure-gaps.js';

const DAY = 86_400_000;

/** An event of the experiment: an exposure to a variant, or a conversion. Key-only visitors have no id. */
interface Event {
  visitor: number | string;
  ts: number;
  variant: string | null;
}

/** The report by its definition, over the events of [from, to). */
function oracle(events: readonly Event[], from: number, to: number, conversions: boolean): VariantResult[] {
  const first = new Map<string, Map<number | string, number>>();
  const last = new Map<number | string, number>();
  for (const event of events) {
    if (event.ts < from || event.ts >= to) continue;
    if (event.variant === null) last.set(event.visitor, Math.max(last.get(event.visitor) ?? -Infinity, event.ts));
    else {
      const byVisitor = first.get(event.variant) ?? new Map<number | string, number>();
      first.set(event.variant, byVisitor);
      byVisitor.set(event.visitor, Math.min(byVisitor.get(event.visitor) ?? Infinity, event.ts));
    }
  }
  return [...first.keys()]
    .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
    .map((variant) => {
      const byVisitor = first.get(variant) as Map<number | string, number>;
      let converted = 0;
      for (const [visitor, ts] of byVisitor) if ((last.get(visitor) ?? -Infinity) >= ts) converted++;
      return { variant, exposures: byVisitor.size, conversions: conversions ? converted : null };
    });
}

/** The cells' input from the events of days up to `hi`, as the rollups hold them: per day, a row per variant and visitor, and per visitor. */
function rollupDays(events: readonly Event[], hi: number): Map<number, { exposures: Map<string, GapExposure>; conversions: Map<number, GapConversion> }> {
  const days = new Map<number, { exposures: Map<string, GapExposure>; conversions: Map<number, GapConversion> }>();
  for (const event of events) {
    const day = Math.floor(event.ts / DAY);
    if (day > hi || typeof event.visitor !== 'number') continue;
    const rows = days.get(day) ?? { exposures: new Map<string, GapExposure>(), conversions: new Map<number, GapConversion>() };
    days.set(day, rows);
    if (event.variant === null) {
      const row = rows.conversions.get(event.visitor);
      if (row === undefined) rows.conversions.set(event.visitor, { visitor: event.visitor, last: event.ts });
      else row.last = Math.max(row.last, event.ts);
    } else {
      const key = `${event.visitor}:${event.variant}`;
      const row = rows.exposures.get(key);
      if (row === undefined) rows.exposures.set(key, { visitor: event.visitor, variant: event.variant, first: event.ts });
      else row.first = Math.min(row.first, event.ts);
    }
  }
  return days;
}

/** The tail's rows over [from, to), a row per variant and visitor, and per visitor. */
function tailOf(events: readonly Event[], from: number, to: number): GapTail {
  const exposures = new Map<string, { variant: string; visitor: number | null; key: string | null; first: number }>();
  const conversions = new Map<string, { visitor: number | null; key: string | null; last: number }>();
  for (const event of events) {
    if (event.ts < from || event.ts >= to) continue;
    const visitor = typeof event.visitor === 'number' ? event.visitor : null;
    const key = typeof event.visitor === 'string' ? event.visitor : null;
    if (event.variant === null) {
      const row = conversions.get(String(event.visitor));
      if (row === undefined) conversions.set(String(event.visitor), { visitor, key, last: event.ts });
      else row.last = Math.max(row.last, event.ts);
    } else {
      const id = `${event.variant}:${event.visitor}`;
      const row = exposures.get(id);
      if (row === undefined) exposures.set(id, { variant: event.variant, visitor, key, first: event.ts });
      else row.first = Math.min(row.first, event.ts);
    }
  }
  return { exposures: [...exposures.values()], conversions: [...conversions.values()] };
}

/** The cells built up to day `hi`, answering [a, to) with the rest as the tail. */
async function fromCells(events: readonly Event[], hi: number, a: number, to: number, conversions: boolean, lo = 0): Promise<VariantResult[]> {
  const builder = new ExposureGapsBuilder();
  const days = rollupDays(events, hi);
  for (const day of [...days.keys()].filter((day) => day >= lo).sort((x, y) => x - y)) {
    const rows = days.get(day) as NonNullable<ReturnType<typeof days.get>>;
    builder.addDay(day, rows.exposures.values(), rows.conversions.values());
  }
  const gaps = await builder.finish();
  const end = Math.min(Math.floor(to / DAY) - 1, hi);
  return answerExposureGaps(gaps, a, end, tailOf(events, Math.max(a, end + 1) * DAY, to), conversions);
}

const DAYS = 8;
/** Events over `DAYS` days; visitors without an id only after day `hi` (a key no refresh has seen). */
const scenario = fc
  .record({
    hi: fc.integer({ min: -1, max: DAYS - 1 }),
    a: fc.integer({ min: 0, max: DAYS - 1 }),
    lo: fc.integer({ min: 0, max: DAYS - 1 }),
    toTime: fc.integer({ min: 1, max: DAYS * DAY }),
    conversions: fc.boolean(),
    raw: fc.array(
      fc.record({
        visitor: fc.integer({ min: 0, max: 12 }),
        keyOnly: fc.boolean(),
        ts: fc.integer({ min: 0, max: DAYS * DAY - 1 }),
        variant: fc.constantFrom(null, null, 'a', 'b', 'ü', ''),
      }),
      { maxLength: 120 },
    ),
  })
  .map(({ hi, a, lo, toTime, conversions, raw }) => {
    const events: Event[] = raw.map(({ visitor, keyOnly, ts, variant }) => {
      const late = Math.floor(ts / DAY) > hi;
      return { visitor: keyOnly && late ? `k${visitor}` : visitor, ts, variant };
    });
    return { hi, a, lo: Math.min(lo, a), to: Math.max(toTime, a * DAY + 1), conversions, events };
  });

describe('exposure gaps', () => {
  it('answer every range of whole days from a day at or after their first as the report does, with any tail', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ hi, a, lo, to, conversions, events }) => {
        expect(await fromCells(events, hi, a, to, conversions, lo)).toEqual(oracle(events, a * DAY, to, conversions));
      }),
      { numRuns: 3000 },
    );
  });

  it('count a conversion before the exposure on the same day as none, and one at the same time as one', async () => {
    const events: Event[] = [
      { visitor: 1, ts: 2 * DAY + 100, variant: 'a' },
      { visitor: 1, ts: 2 * DAY + 50, variant: null },
      { visitor: 2, ts: 2 * DAY + 100, variant: 'a' },
      { visitor: 2, ts: 2 * DAY + 100, variant: null },
    ];
    expect(await fromCells(events, 5, 0, 6 * DAY, true)).toEqual([{ variant: 'a', exposures: 2, conversions: 1 }]);
    expect(await fromCells(events, 5, 3, 6 * DAY, true)).toEqual([]);
  });

  it('count a visitor exposed before the range by its first exposure in it', async () => {
    const events: Event[] = [
      { visitor: 1, ts: 1 * DAY, variant: 'a' },
      { visitor: 1, ts: 2 * DAY, variant: null },
      { visitor: 1, ts: 4 * DAY, variant: 'a' },
      { visitor: 1, ts: 5 * DAY, variant: null },
    ];
    // From day 3: exposed on day 4, converted on day 5 (cells up to day 5), or in the tail (cells up to day 4).
    expect(await fromCells(events, 5, 3, 7 * DAY, true)).toEqual([{ variant: 'a', exposures: 1, conversions: 1 }]);
    expect(await fromCells(events, 4, 3, 7 * DAY, true)).toEqual([{ variant: 'a', exposures: 1, conversions: 1 }]);
    // Up to day 4 only: not converted yet.
    expect(await fromCells(events, 5, 3, 5 * DAY, true)).toEqual([{ variant: 'a', exposures: 1, conversions: 0 }]);
  });

  it('refuse days out of order', () => {
    const builder = new ExposureGapsBuilder();
    builder.addDay(2, [], []);
    expect(() => builder.addDay(2, [], [])).toThrow(/order/);
  });
});
