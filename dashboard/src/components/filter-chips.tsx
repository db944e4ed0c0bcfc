/** The view's filters as chips; each one's button removes it, and "Clear filters" removes them all. */
import type { ReactNode } from 'react';
import { FILTER_LABELS, type ViewState, filterList, withoutFilter } from '../lib/view-state.js';

/** The chips, or nothing without a filter. */
export function FilterChips({ view, onChange }: { view: ViewState; onChange: (next: ViewState) => void }): ReactNode {
  const list = filterList(view.filters);
  if (list.length === 0) return null;
  return (
    <div className="chips" role="group" aria-label="Filters" data-testid="filters">
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
