/** Errors of the view's range and filters, grouped by message; a row opens its latest stack. */
import { type ReactNode, useState } from 'react';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatDateTime } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';

/** The page. */
export function ErrorsPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const errors = useResource((signal) => reports.errors(api, report.query, signal), [api, report.queryKey]);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div className="page">
      <ViewBar title="Errors" report={report} note="Grouped by message, most frequent first" />
      <Panel title="By message" resource={errors} testId="errors">
        {(answer) =>
          answer.errors.length === 0 ? (
            <p className="muted">No errors in this range.</p>
          ) : (
            <ul className="error-list">
              {answer.errors.map((g) => (
                <li key={g.message}>
                  <button type="button" className="error-row" aria-expanded={open === g.message} onClick={() => setOpen(open === g.message ? null : g.message)}>
                    <span className="error-message">{g.message === '' ? '(no message)' : g.message}</span>
                    <span className="num">{formatCount(g.count)}×</span>
                    <span className="muted nowrap">
                      {formatCount(g.visitors)} visitor{g.visitors === 1 ? '' : 's'} · last {formatDateTime(g.last_seen)}
                    </span>
                  </button>
                  {open === g.message && <pre className="stack">{g.last_stack ?? 'No stack was recorded.'}</pre>}
                </li>
              ))}
            </ul>
          )
        }
      </Panel>
    </div>
  );
}
