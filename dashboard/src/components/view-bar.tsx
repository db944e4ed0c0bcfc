/** The head of a report page: its title, what it shows, the range picker, and the filter chips below. */
import type { ReactNode } from 'react';
import type { ReportView } from '../lib/use-report-query.js';
import { FilterChips } from './filter-chips.js';
import { RangePicker } from './range-picker.js';

interface ViewBarProps {
  title: string;
  report: ReportView;
  /** A line under the title. */
  note?: string;
  /** False on pages with a range of their own (live). @default true */
  withRange?: boolean;
  /** Something small beside the title (the overview's visitors now). */
  badge?: ReactNode;
}

/** The bar. */
export function ViewBar({ title, report, note, withRange = true, badge }: ViewBarProps): ReactNode {
  const { view, setView, range } = report;
  return (
    <div className="view-bar" data-testid="view" data-from={new Date(range.from).toISOString()} data-to={new Date(range.to).toISOString()}>
      <div className="toolbar">
        <div>
          <div className="title-row">
            <h1>{title}</h1>
            {badge}
          </div>
          {note !== undefined && <p className="muted small note">{note}</p>}
        </div>
        {withRange && <RangePicker value={view.range} onChange={(range) => setView({ ...view, range })} />}
      </div>
      <FilterChips view={view} onChange={setView} />
    </div>
  );
}
