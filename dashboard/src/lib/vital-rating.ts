/** Good / needs improvement / poor, by the thresholds web.dev publishes for each vital's p75. */

const THRESHOLDS = {
  lcp: [2500, 4000],
  inp: [200, 500],
  cls: [0.1, 0.25],
  fcp: [1800, 3000],
} as const;

/** The rating of a p75 value; `none` without one. */
export function vitalRating(metric: keyof typeof THRESHOLDS, value: number | null): 'good' | 'fair' | 'poor' | 'none' {
  if (value === null) return 'none';
  const [good, poor] = THRESHOLDS[metric];
  return value <= good ? 'good' : value <= poor ? 'fair' : 'poor';
}
