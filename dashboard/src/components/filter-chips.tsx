/**
 * The view's filters as chips; each one's button removes it, and "Clear filters" removes them all.
 * A filter chosen far down the page (a row of a top list) brings the chips into view, so that
 * what changed every panel is in sight.
 */
import { type ReactNode, useEffect, useRef } from 'react';
import { FILTER_LABELS, type FilterDimension, type ViewState, filterList, withoutFilter } from '../lib/view-state.js';
import { CountryText } from './country-text.js';

/** How a chip shows a value: a country by its name and flag (the view and the endpoints keep the code). */
const chipValue = (dimension: FilterDimension, value: string): ReactNode => (dimension === 'country' ? <CountryText code={value} /> : value);

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
            <span className="muted">{FILTER_LABELS[dimension]}:</span> {chipValue(dimension, value)}
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
