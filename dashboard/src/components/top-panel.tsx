/** A panel with the top values of one dimension over a range. */
import type { ReactNode } from 'react';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { useResource } from '../lib/use-resource.js';
import { Panel } from './panel.js';
import { TopTable } from './top-table.js';

interface TopPanelProps {
  title: string;
  dimension: reports.TopDimension;
  label: string;
  range: reports.Span;
  countLabel?: string;
  count?: 'visitors' | 'events';
  emptyValue?: string;
}

/** The panel. */
export function TopPanel({ title, dimension, label, range, ...table }: TopPanelProps): ReactNode {
  const api = useApi();
  const top = useResource((signal) => reports.top(api, range, dimension, 8, signal), [api, range.from, range.to, dimension]);
  return (
    <Panel title={title} resource={top} testId={`top-${dimension}`}>
      {(answer) => <TopTable rows={answer.rows} label={label} {...table} />}
    </Panel>
  );
}
