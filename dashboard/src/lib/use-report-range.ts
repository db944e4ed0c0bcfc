/**
 * The range a page asks about. It is fixed when the page opens or a range is picked, not moved on
 * every render: all panels of a view ask about the same `[from, to)`, and adding a filter keeps
 * it, so the numbers before and after differ by the filter alone.
 */
import { useState } from 'react';
import { type RangeKey, type ReportRange, rangeFor } from './range.js';

/** The range of `key`, computed at the moment `key` was first seen. */
export function useReportRange(key: RangeKey): ReportRange {
  const [picked, setPicked] = useState(() => ({ key, range: rangeFor(key, Date.now()) }));
  if (picked.key !== key) {
    // React's "adjust state while rendering": the new range replaces the old before any effect runs.
    const next = { key, range: rangeFor(key, Date.now()) };
    setPicked(next);
    return next.range;
  }
  return picked.range;
}
