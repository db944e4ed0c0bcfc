/** The arithmetic of the SVG line chart: scales, a "nice" top, the path of a series. */

/** The smallest of 1, 2, 2.5, 5 × 10^k that is ≥ `max` (at least 1): a readable top of the axis. */
export function niceCeiling(max: number): number {
  if (!(max > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * magnitude >= max) return step * magnitude;
  }
  return 10 * magnitude;
}

/** The `d` of a polyline through `values`, spread over `width`, scaled to `top` over `height`. */
export function linePath(values: readonly number[], width: number, height: number, top: number): string {
  if (values.length === 0) return '';
  const dx = values.length === 1 ? 0 : width / (values.length - 1);
  return values
    .map((v, i) => {
      const x = values.length === 1 ? width / 2 : i * dx;
      const y = height - (Math.max(0, v) / top) * height;
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}

/** Indexes of at most `count` evenly spaced labels out of `length`, the last always among them. */
export function labelIndexes(length: number, count: number): number[] {
  if (length <= 0) return [];
  if (length <= count) return Array.from({ length }, (_, i) => i);
  const step = Math.ceil((length - 1) / (count - 1));
  const out: number[] = [];
  for (let i = 0; i < length - 1; i += step) out.push(i);
  if (length - 1 - (out[out.length - 1] ?? 0) < step / 2) out.pop();
  out.push(length - 1);
  return out;
}
