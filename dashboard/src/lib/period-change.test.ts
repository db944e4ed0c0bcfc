import { describe, expect, it } from 'vitest';
import {
  changeDirection,
  changeLabel,
  changeText,
  changeTone,
  percentChange,
  pointChange,
  previousPeriodName,
  previousSpan,
} from './period-change.js';
import { rangeFor } from './range.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 25, 15, 30);

describe('previousSpan(span)', () => {
  it('is as long as the span and ends where it starts', () => {
    expect(previousSpan({ from: 1000, to: 1600 })).toEqual({ from: 400, to: 1000 });
  });
  it('of a 7-day range (six days and the part of today so far) starts as much earlier', () => {
    const range = rangeFor('7d', now);
    const previous = previousSpan(range);
    expect(previous.to).toBe(Date.UTC(2026, 10, 19));
    expect(previous.to - previous.from).toBe(range.to - range.from);
    expect(previous.from).toBe(Date.UTC(2026, 10, 19) - 6 * DAY - 15.5 * HOUR - 1);
  });
  it('of today ends at the start of today', () => {
    const midnight = Date.UTC(2026, 10, 25);
    const range = rangeFor('today', now, midnight);
    expect(previousSpan(range)).toEqual({ from: midnight - (now + 1 - midnight), to: midnight });
  });
});

describe('percentChange(current, previous)', () => {
  it('is the relative change in whole percent, halves away from zero both ways', () => {
    expect(percentChange(112, 100)).toEqual({ kind: 'percent', value: 12 });
    expect(percentChange(97, 100)).toEqual({ kind: 'percent', value: -3 });
    expect(percentChange(4, 2)).toEqual({ kind: 'percent', value: 100 });
    expect(percentChange(201, 200)).toEqual({ kind: 'percent', value: 1 }); // +0.5%
    expect(percentChange(199, 200)).toEqual({ kind: 'percent', value: -1 }); // −0.5%
    expect(percentChange(7, 11)).toEqual({ kind: 'percent', value: -36 }); // −36.36…%
  });
  it('is 0 (never −0) for a change that rounds to nothing', () => {
    const change = percentChange(1000, 1001);
    expect(change).toEqual({ kind: 'percent', value: 0 });
    expect(Object.is(change.kind === 'percent' && change.value, -0)).toBe(false);
  });
  it('is new with nothing before, and nothing to compare with nothing on either side', () => {
    expect(percentChange(5, 0)).toEqual({ kind: 'new' });
    expect(percentChange(5, null)).toEqual({ kind: 'new' });
    expect(percentChange(0, 0)).toEqual({ kind: 'none' });
    expect(percentChange(null, 30_000)).toEqual({ kind: 'none' });
    expect(percentChange(null, null)).toEqual({ kind: 'none' });
  });
  it('is −100% when everything went', () => {
    expect(percentChange(0, 8)).toEqual({ kind: 'percent', value: -100 });
  });
});

describe('pointChange(current, previous) of rates', () => {
  it('is the difference in percentage points: one decimal under 10, whole beyond', () => {
    expect(pointChange(0.25, 0.5)).toEqual({ kind: 'points', value: -25 });
    expect(pointChange(0.44, 0.4)).toEqual({ kind: 'points', value: 4 });
    expect(pointChange(0.4235, 0.4)).toEqual({ kind: 'points', value: 2.4 });
    expect(pointChange(0.5, 0.3755)).toEqual({ kind: 'points', value: 12 });
    expect(pointChange(0.3, 0.3)).toEqual({ kind: 'points', value: 0 });
  });
  it('takes a rate of 0 before as a rate, and a missing rate as nothing to compare', () => {
    expect(pointChange(0.1, 0)).toEqual({ kind: 'points', value: 10 });
    expect(pointChange(0.1, null)).toEqual({ kind: 'none' });
    expect(pointChange(null, 0.1)).toEqual({ kind: 'none' });
  });
});

describe('how a change reads', () => {
  const period = 'the previous 30 days';
  it('shows an arrow and the size, and says the direction in words', () => {
    expect(changeText({ kind: 'percent', value: 12 })).toBe('▲ 12%');
    expect(changeLabel({ kind: 'percent', value: 12 }, period)).toBe('up 12% from the previous 30 days');
    expect(changeText({ kind: 'percent', value: -3 })).toBe('▼ 3%');
    expect(changeLabel({ kind: 'percent', value: -3 }, period)).toBe('down 3% from the previous 30 days');
    expect(changeText({ kind: 'percent', value: 1250 })).toBe('▲ 1,250%');
  });
  it('writes rates in points', () => {
    expect(changeText({ kind: 'points', value: -2.5 })).toBe('▼ 2.5 pp');
    expect(changeLabel({ kind: 'points', value: -2.5 }, period)).toBe('down 2.5 percentage points from the previous 30 days');
    expect(changeLabel({ kind: 'points', value: 1 }, period)).toBe('up 1 percentage point from the previous 30 days');
  });
  it('shows no arrow for no change, new, or nothing to compare', () => {
    expect(changeText({ kind: 'percent', value: 0 })).toBe('0%');
    expect(changeLabel({ kind: 'points', value: 0 }, period)).toBe('no change from the previous 30 days');
    expect(changeText({ kind: 'new' })).toBe('new');
    expect(changeLabel({ kind: 'new' }, period)).toBe('new: none in the previous 30 days');
    expect(changeText({ kind: 'none' })).toBe('—');
    expect(changeLabel({ kind: 'none' }, period)).toBe('no comparison with the previous 30 days');
  });
  it('is good or bad news by the number: down is good for a bounce rate', () => {
    expect(changeDirection({ kind: 'percent', value: 5 })).toBe('up');
    expect(changeTone({ kind: 'percent', value: 5 }, 'up')).toBe('good');
    expect(changeTone({ kind: 'percent', value: -5 }, 'up')).toBe('bad');
    expect(changeTone({ kind: 'points', value: -5 }, 'down')).toBe('good');
    expect(changeTone({ kind: 'points', value: 5 }, 'down')).toBe('bad');
    expect(changeTone({ kind: 'percent', value: 0 }, 'up')).toBe('neutral');
    expect(changeTone({ kind: 'new' }, 'up')).toBe('neutral');
    expect(changeDirection({ kind: 'none' })).toBeNull();
  });
});

describe('previousPeriodName(key, span)', () => {
  it('names the day ranges by their days and today by its hours', () => {
    expect(previousPeriodName('30d', rangeFor('30d', now))).toBe('the previous 30 days');
    expect(previousPeriodName('7d', rangeFor('7d', now))).toBe('the previous 7 days');
    expect(previousPeriodName('today', { from: now - 14.3 * HOUR, to: now })).toBe('the previous 14 hours');
    expect(previousPeriodName('today', { from: now - HOUR, to: now + 1 })).toBe('the previous hour');
  });
});
