/**
 * The view's filters as chips; each one's button removes it, and "Clear filters" removes them all.
 * A filter chosen far down the page (a row of a top list) brings the chips into view, so that
 * what changed every panel is in sight.
 */
import { type ReactNode, useEffect, useRef } from 'react';
import { FILTER_LABELS, type ViewState, filterList, withoutFilter } from '../lib/view-state.js';

/** The chips, or nothing without a filter. */
export function FilterChips({ view, onChange }: { view: ViewState; onChange: (next: ViewState) => void }): ReactNode {
  const list = filterList(view.filters);
  const box = useRef<HTMLDivElement>(null);
  const count = useRef(list.length);
  useEffect(() => {
    if (list.length > count.current) box.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    count.current = list.length;
  }, [list.length]);
  if (list.length === 0) return null;
  return (
    <div ref={box} className="chips" role="group" aria-label="Filters" data-testid="filters">
      {list.map(({ dimension, value }) => (
        <span key={dimension} className="chip" data-testid="filter-chip">
          <span className="chip-text" title={value}>
            <span className="muted">{FILTER_LABELS[dimension]}:</span> {value}
          </span>
          <button type="button" className="chip-remove" aria-label={`Remove filter ${FILTER_LABELS[dimension]}: ${value}`} onClick={() => onChange(withoutFilter(view, dimension))}>
            ×
          </button>
        </span>
      ))}
      {list.length > 1 && (
        <button type="button" className="link small" onClick={() => onChange({ ...view, filters: {} })}>
          Clear filters
        </button>
      )}
    </div>
  );
}
