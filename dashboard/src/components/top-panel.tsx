/** A panel with the top values of one dimension for the view's question; a row filters the view by its value. */
import type { ReactNode } from 'react';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { useResource } from '../lib/use-resource.js';
import type { FilterDimension } from '../lib/view-state.js';
import { Panel } from './panel.js';
import { TopTable } from './top-table.js';

interface TopPanelProps {
  title: string;
  dimension: reports.TopDimension;
  /** The filter a row sets (the dimension itself); none for a list that is not a filter. */
  filter?: FilterDimension;
  label: string;
  query: reports.ReportQuery;
  /** Changes exactly when `query` does. */
  queryKey: string;
  onFilter: (dimension: FilterDimension, value: string) => void;
  countLabel?: string;
  count?: 'visitors' | 'events';
  emptyValue?: string;
  /** How a value reads. @default the value as it is */
  format?: (value: string) => ReactNode;
}

/** The panel. */
export function TopPanel({ title, dimension, filter, label, query, queryKey, onFilter, ...table }: TopPanelProps): ReactNode {
  const api = useApi();
  const top = useResource((signal) => reports.top(api, query, dimension, 8, signal), [api, queryKey, dimension]);
  return (
    <Panel title={title} resource={top} testId={`top-${dimension}`}>
      {(answer) =>
        filter === undefined ? (
          <TopTable rows={answer.rows} label={label} {...table} />
        ) : (
          <TopTable rows={answer.rows} label={label} {...table} active={query.filters[filter]} onPick={(value) => onFilter(filter, value)} />
        )
      }
    </Panel>
  );
}
