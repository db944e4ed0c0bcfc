import { describe, expect, it } from 'vitest';
import { assignVariant, hashToUnit, trafficFraction } from './experiment-assignment.js';
import type { Experiment, ExperimentStatus, Variant } from './experiment-types.js';

function variant(key: string, trafficSplit: number, isControl = false): Variant {
  return { id: `id_${key}`, key, name: key.toUpperCase(), isControl, trafficSplit, createdAt: '2026-01-01', updatedAt: '2026-01-01' };
}

function experiment(key: string, trafficSplit: number, variants: Variant[], status: ExperimentStatus = 'RUNNING'): Experiment {
  return { id: `exp_${key}`, key, name: key, status, trafficSplit, variants, createdAt: '2026-01-01', updatedAt: '2026-01-01' };
}

/** Counts the variants of 10,000 sequential ids (deterministic: the same counts on every run). */
function distribution(exp: Experiment, ids = 10_000): Record<string, number> {
  const counts: Record<string, number> = { none: 0 };
  for (let i = 0; i < ids; i++) {
    const key = assignVariant(exp, `user-${i}`)?.key ?? 'none';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('hashToUnit(text)', () => {
  it('is FNV-1a 32-bit with the fmix32 finaliser, scaled to [0, 1)', () => {
    // Reference values (computed independently), so a server can check its own implementation.
    expect(hashToUnit('')).toBe(2872998923 / 2 ** 32);
    expect(hashToUnit('a')).toBe(444641715 / 2 ** 32);
    expect(hashToUnit('checkout:user-1')).toBe(1597801870 / 2 ** 32);
    for (const text of ['a', 'exp:user-1', 'ünïcödé', 'x'.repeat(1000)]) {
      const unit = hashToUnit(text);
      expect(unit).toBeGreaterThanOrEqual(0);
      expect(unit).toBeLessThan(1);
    }
  });

  it('spreads sequential ids evenly over ten buckets', () => {
    const buckets = Array.from({ length: 10 }, () => 0);
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(hashToUnit(`exp:user-${i}`) * 10)]!++;
    for (const count of buckets) expect(Math.abs(count - 1000)).toBeLessThan(100);
  });
});

describe('trafficFraction(split)', () => {
  it.each([
    [0, 0],
    [0.25, 0.25],
    [1, 1],
    [50, 0.5],
    [100, 1],
    [-1, 0],
    [101, 0],
    [Number.NaN, 0],
    ['50', 0],
  ])('%s → %s', (split, fraction) => {
    expect(trafficFraction(split)).toBe(fraction);
  });
});

describe('assignVariant(experiment, unitId)', () => {
  it('splits 10,000 ids 50/50 within 3%', () => {
    const counts = distribution(experiment('checkout', 1, [variant('control', 0.5, true), variant('b', 0.5)]));
    expect(counts.none).toBe(0);
    expect(Math.abs(counts.control! - 5000)).toBeLessThan(300);
    expect(Math.abs(counts.b! - 5000)).toBeLessThan(300);
  });

  it('lets in the traffic share, then splits by weight (percent and fraction alike)', () => {
    for (const split of [0.4, 40]) {
      const counts = distribution(experiment('pricing', split, [variant('a', 20), variant('b', 30), variant('c', 50)]));
      expect(Math.abs(counts.none! - 6000)).toBeLessThan(300);
      expect(Math.abs(counts.a! - 800)).toBeLessThan(150);
      expect(Math.abs(counts.b! - 1200)).toBeLessThan(150);
      expect(Math.abs(counts.c! - 2000)).toBeLessThan(150);
    }
  });

  it('is stable: the same id always gets the same variant', () => {
    const exp = experiment('e', 1, [variant('a', 1), variant('b', 1), variant('c', 1)]);
    for (let i = 0; i < 100; i++) expect(assignVariant(exp, `u${i}`)).toBe(assignVariant({ ...exp }, `u${i}`));
  });

  it('assigns independently per experiment key', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `user-${i}`);
    const one = experiment('one', 1, [variant('a', 1), variant('b', 1)]);
    const two = experiment('two', 1, [variant('a', 1), variant('b', 1)]);
    const same = ids.filter((id) => assignVariant(one, id)!.key === assignVariant(two, id)!.key).length;
    expect(Math.abs(same - 500)).toBeLessThan(80);
  });

  it('keeps users in the experiment when its traffic grows', () => {
    const small = experiment('ramp', 0.2, [variant('a', 1)]);
    const large = { ...small, trafficSplit: 0.6 };
    for (let i = 0; i < 2000; i++) {
      if (assignVariant(small, `user-${i}`) !== null) expect(assignVariant(large, `user-${i}`)).not.toBeNull();
    }
  });

  it.each<ExperimentStatus>(['DRAFT', 'PAUSED', 'COMPLETED', 'ARCHIVED'])('assigns nothing in a %s experiment', (status) => {
    expect(distribution(experiment('e', 1, [variant('a', 1)], status), 100)).toEqual({ none: 100 });
  });

  it('assigns nothing without a positive weight, and skips zero, negative and non-numeric weights', () => {
    expect(distribution(experiment('e', 1, []), 100)).toEqual({ none: 100 });
    expect(distribution(experiment('e', 1, [variant('a', 0)]), 100)).toEqual({ none: 100 });
    const counts = distribution(experiment('e', 1, [variant('a', 0), variant('b', -5), variant('c', Number.NaN), variant('d', 1)]), 100);
    expect(counts).toEqual({ none: 0, d: 100 });
  });
});
