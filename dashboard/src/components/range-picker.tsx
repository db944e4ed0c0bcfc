/** The overview's range buttons. */
import type { ReactNode } from 'react';
import { RANGES, type RangeKey } from '../lib/range.js';

/** A segmented control of the ranges. */
export function RangePicker({ value, onChange }: { value: RangeKey; onChange: (key: RangeKey) => void }): ReactNode {
  return (
    <div className="segmented" role="group" aria-label="Time range">
      {RANGES.map((r) => (
        <button key={r.key} type="button" aria-pressed={r.key === value} onClick={() => onChange(r.key)}>
          {r.label}
        </button>
      ))}
    </div>
  );
}
