/** Errors of the last 7 days grouped by message; a row opens its latest stack. */
import { type ReactNode, useMemo, useState } from 'react';
import { Panel } from '../components/panel.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatDateTime } from '../lib/format.js';
import { rangeFor } from '../lib/range.js';
import { useResource } from '../lib/use-resource.js';

/** The page. */
export function ErrorsPage(): ReactNode {
  const api = useApi();
  const range = useMemo(() => rangeFor('7d', Date.now()), []);
  const errors = useResource((signal) => reports.errors(api, range, signal), [api, range]);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div className="page">
      <div className="toolbar">
        <h1>Errors</h1>
        <span className="muted">Last 7 days</span>
      </div>
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
