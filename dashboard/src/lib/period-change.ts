/**
 * How a headline number moved against the previous period: the period of equal length just before
 * the view's range, with the same filters. Counts and durations move by a relative change (`▲ 12%`),
 * rates by percentage points (`▼ 3 pp`): a bounce rate going from 40% to 44% is 4 points, and
 * "▲ 10%" beside it would read as if it were now 50%.
 */
import type { Span } from '../api/reports.js';
import { formatCount } from './format.js';
import type { RangeKey } from './range.js';

/** A headline number's change, rounded as it is shown. */
export type PeriodChange =
  /** Nothing to compare: no value now, or none before and none now. */
  | { kind: 'none' }
  /** Something now where the previous period had nothing: a ratio to zero has no size. */
  | { kind: 'new' }
  /** Relative change in whole percent, signed. */
  | { kind: 'percent'; value: number }
  /** Change of a rate in percentage points, signed (one decimal under 10 points, whole beyond). */
  | { kind: 'points'; value: number };

/** Which way is better for a number: more visitors is good, more bounces is not. */
export type GoodDirection = 'up' | 'down';

/** Which way a change went, after rounding: `▲ 0%` is never shown. */
export type ChangeDirection = 'up' | 'down' | 'flat';

const HOUR_MS = 3_600_000;

/** The previous period of `span`: as long, ending where `span` starts. */
export function previousSpan(span: Span): Span {
  return { from: span.from - (span.to - span.from), to: span.from };
}

/**
 * Rounds half away from zero, so that a rise and a fall of the same size show the same number.
 * The size is first cut to 12 significant digits: a difference of two rates carries binary noise
 * (0.4235 − 0.4 is 0.02349999…), which would otherwise round a shown half the wrong way.
 */
function roundAway(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  const size = Number(Math.abs(value).toPrecision(12));
  return (Math.sign(value) * Math.round(size * scale)) / scale || 0;
}

/**
 * The relative change of a count or a duration, in whole percent. `null` is "no value" (an average
 * over no sessions): with none now there is nothing to compare; with none or 0 before, a value now
 * is `new`.
 */
export function percentChange(current: number | null, previous: number | null): PeriodChange {
  if (current === null || !Number.isFinite(current)) return { kind: 'none' };
  if (previous === null || !Number.isFinite(previous) || previous === 0) return current === 0 ? { kind: 'none' } : { kind: 'new' };
  return { kind: 'percent', value: roundAway(((current - previous) / previous) * 100, 0) };
}

/**
 * The change of a rate of 0..1 in percentage points, rounded as `formatPercent` rounds a rate (one
 * decimal under 10, whole beyond). A rate of 0 before is a rate like any other; `null` (no sessions)
 * on either side leaves nothing to compare.
 */
export function pointChange(current: number | null, previous: number | null): PeriodChange {
  if (current === null || previous === null || !Number.isFinite(current) || !Number.isFinite(previous)) return { kind: 'none' };
  const points = (current - previous) * 100;
  return { kind: 'points', value: roundAway(points, Math.abs(points) < 10 ? 1 : 0) };
}

/** The direction of a measured change; null for `none` and `new`, which are not measured. */
export function changeDirection(change: PeriodChange): ChangeDirection | null {
  if (change.kind === 'none' || change.kind === 'new') return null;
  return change.value > 0 ? 'up' : change.value < 0 ? 'down' : 'flat';
}

/** Whether a change is good news, bad news, or neither (flat, new, nothing to compare). */
export function changeTone(change: PeriodChange, good: GoodDirection): 'good' | 'bad' | 'neutral' {
  const direction = changeDirection(change);
  if (direction === null || direction === 'flat') return 'neutral';
  return direction === good ? 'good' : 'bad';
}

/** The size of a measured change without its sign, with its unit: `12%`, `1,250%`, `3.5 pp`. */
function magnitude(change: { kind: 'percent' | 'points'; value: number }): { short: string; long: string } {
  const size = Math.abs(change.value);
  if (change.kind === 'percent') return { short: `${formatCount(size)}%`, long: `${formatCount(size)}%` };
  const text = size.toLocaleString('en-US', { maximumFractionDigits: 1 });
  return { short: `${text} pp`, long: `${text} percentage ${size === 1 ? 'point' : 'points'}` };
}

/** What the card shows: `▲ 12%`, `▼ 3.5 pp`, `0%`, `new`, `—`. The arrow is text, not colour alone. */
export function changeText(change: PeriodChange): string {
  if (change.kind === 'none') return '—';
  if (change.kind === 'new') return 'new';
  const direction = changeDirection(change);
  const { short } = magnitude(change);
  return direction === 'up' ? `▲ ${short}` : direction === 'down' ? `▼ ${short}` : short;
}

/** What a screen reader says instead of the arrow: `up 12% from the previous 30 days`. */
export function changeLabel(change: PeriodChange, period: string): string {
  if (change.kind === 'none') return `no comparison with ${period}`;
  if (change.kind === 'new') return `new: none in ${period}`;
  const direction = changeDirection(change);
  const { long } = magnitude(change);
  return direction === 'flat' ? `no change from ${period}` : `${direction} ${long} from ${period}`;
}

/**
 * How the labels name the previous period: `the previous 7 days` for the day ranges; for today,
 * whose length is the time since midnight, `the previous 14 hours` (at least one).
 */
export function previousPeriodName(key: RangeKey, span: Span): string {
  if (key === 'today') {
    const hours = Math.max(1, Math.round((span.to - span.from) / HOUR_MS));
    return `the previous ${hours === 1 ? 'hour' : `${hours} hours`}`;
  }
  return `the previous ${key === '7d' ? 7 : key === '30d' ? 30 : 90} days`;
}
