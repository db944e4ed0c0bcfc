/**
 * Deterministic variant assignment: the same unit id and experiment always give the same variant,
 * on any device and on the server, with no state and no randomness.
 *
 * 1. bucket = hash(`<experiment key>:<unit id>`) / 2^32, in [0, 1), where hash is 32-bit FNV-1a
 *    over the string's UTF-16 code units (equal to its bytes for ASCII), followed by murmur3's
 *    fmix32 finaliser (FNV-1a alone spreads similar ids, such as `user-1`, `user-2`, poorly over the
 *    high bits).
 * 2. The unit enters the experiment when bucket < traffic, the experiment's `trafficSplit` as a
 *    fraction ({@link trafficFraction}).
 * 3. Inside, position = bucket / traffic (again uniform in [0, 1)) × the sum of the variants'
 *    weights; the variant is the first whose cumulative weight exceeds the position.
 */
import type { Experiment, Variant } from './experiment-types.js';

/** 32-bit FNV-1a with murmur3's fmix32 finaliser, scaled to [0, 1). */
export function hashToUnit(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return ((hash ^ (hash >>> 16)) >>> 0) / 2 ** 32;
}

/**
 * An experiment's `trafficSplit` as a fraction: 0–1 is taken as a fraction, above 1 up to 100 as a
 * percent; anything else (negative, above 100, not a number) is 0.
 */
export function trafficFraction(split: unknown): number {
  if (typeof split !== 'number' || !(split >= 0 && split <= 100)) return 0;
  return split > 1 ? split / 100 : split;
}

/**
 * The variant of `unitId` in `experiment`, or null when the experiment is not `RUNNING`, the unit
 * falls outside its traffic, or no variant has a positive weight.
 */
export function assignVariant(experiment: Experiment, unitId: string): Variant | null {
  if (experiment.status !== 'RUNNING') return null;
  const traffic = trafficFraction(experiment.trafficSplit);
  const bucket = hashToUnit(`${experiment.key}:${unitId}`);
  if (!(bucket < traffic)) return null;
  const weight = (variant: Variant): number => (Number.isFinite(variant.trafficSplit) && variant.trafficSplit > 0 ? variant.trafficSplit : 0);
  let position = (bucket / traffic) * experiment.variants.reduce((sum, variant) => sum + weight(variant), 0);
  let chosen: Variant | null = null;
  for (const variant of experiment.variants) {
    if (weight(variant) === 0) continue;
    chosen = variant;
    position -= weight(variant);
    if (position < 0) break;
  }
  return chosen;
}
