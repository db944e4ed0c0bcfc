import { describe, expect, it } from 'vitest';
import { type FunnelStep, MAX_STEPS, addStep, parseStep, removeStep, stepParam } from './funnel-steps.js';
import { labelIndexes, linePath, niceCeiling } from './chart-geometry.js';

describe('funnel steps', () => {
  it('round-trips a step through its parameter, colons in the value included', () => {
    const step = { kind: 'page', value: '/a:b' } as const;
    expect(parseStep(stepParam(step))).toEqual(step);
    expect(parseStep('nope')).toBeNull();
  });
  it('adds up to the maximum and removes by index', () => {
    let steps: FunnelStep[] = [{ kind: 'event', value: 'x' }];
    for (let i = 0; i < 20; i++) steps = addStep(steps, { kind: 'event', value: `s${i}` });
    expect(steps).toHaveLength(MAX_STEPS);
    expect(removeStep(steps, 0)[0]).toEqual({ kind: 'event', value: 's0' });
  });
});

describe('chart geometry', () => {
  it('rounds the axis top up to 1, 2, 2.5 or 5 × 10^k', () => {
    expect(niceCeiling(0)).toBe(1);
    expect(niceCeiling(7)).toBe(10);
    expect(niceCeiling(180)).toBe(200);
    expect(niceCeiling(2100)).toBe(2500);
  });
  it('draws a path across the width, zero at the bottom', () => {
    expect(linePath([0, 10], 100, 50, 10)).toBe('M0.0,50.0 L100.0,0.0');
    expect(linePath([], 100, 50, 10)).toBe('');
  });
  it('labels at most count buckets, always the last', () => {
    expect(labelIndexes(3, 6)).toEqual([0, 1, 2]);
    const many = labelIndexes(90, 6);
    expect(many.length).toBeLessThanOrEqual(6);
    expect(many[many.length - 1]).toBe(89);
  });
});
