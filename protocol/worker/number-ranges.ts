/**
 * Event numbers as ranges, the form acknowledgements cross the boundary in. An event's number is
 * its id's counter (protocol/worker/worker-contract.ts); the core reports the numbers of the events
 * that left its queue as ranges, so a 10,000-event burst is acknowledged to the main thread in a
 * handful of numbers instead of 10,000 id strings, and the facade settles them in O(ranges), not
 * O(events) (docs/architecture.md, "The worker boundary": the main thread's share stays small).
 */

/**
 * `numbers` as ascending, disjoint, non-adjacent half-open ranges, flat: `[from0, to0, from1, to1, …]`.
 * Sorts `numbers` in place; duplicates are fine.
 */
export function toRanges(numbers: number[]): number[] {
  const ranges: number[] = [];
  if (numbers.length === 0) return ranges;
  numbers.sort((a, b) => a - b);
  let from = numbers[0]!;
  let to = from + 1;
  for (let i = 1; i < numbers.length; i++) {
    const n = numbers[i]!;
    if (n <= to) to = Math.max(to, n + 1);
    else {
      ranges.push(from, to);
      from = n;
      to = n + 1;
    }
  }
  ranges.push(from, to);
  return ranges;
}
