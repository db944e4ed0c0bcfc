/** A report page's question: the view of the URL's query, its range fixed when picked, and its filters. */
import { useMemo } from 'react';
import type { ReportQuery } from '../api/reports.js';
import type { ReportRange } from './range.js';
import { useReportRange } from './use-report-range.js';
import { useViewState } from './use-view-state.js';
import { type ViewState, filtersKey } from './view-state.js';

/** What a report page reads and changes. */
export interface ReportView {
  view: ViewState;
  setView: (next: ViewState) => void;
  range: ReportRange;
  /** Stable while range and filters stay the same, so panels load once per question. */
  query: ReportQuery;
  /** Changes exactly when `query` does: the dependency of a panel's load. */
  queryKey: string;
}

/** The page's view and question. */
export function useReportQuery(): ReportView {
  const [view, setView] = useViewState();
  const range = useReportRange(view.range);
  const key = filtersKey(view.filters);
  // The filters object is new on every parse of the query; its key says when it really changed.
  const query = useMemo(() => ({ from: range.from, to: range.to, filters: view.filters }), [range, key]);
  return { view, setView, range, query, queryKey: `${range.from}:${range.to}:${key}` };
}
