/**
 * Errors of the view's range and filters, grouped by message (a row opens its latest stack), and
 * the frustration signals of clicks: the elements with the most rage, dead and error clicks, each
 * with links to the replays of its latest sessions.
 */
import { type ReactNode, useState } from 'react';
import type { FrustrationSignal } from '../../../protocol/frustration-signals.js';
import { FrustrationTable } from '../components/frustration-table.js';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatCountOf, formatDateTime } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';

/** The signals in the order of the panel's tabs, with their names. */
const SIGNALS: ReadonlyArray<{ id: FrustrationSignal; label: string; note: string }> = [
  { id: 'rage_click', label: 'Rage clicks', note: '3 or more clicks on one element within a second' },
  { id: 'dead_click', label: 'Dead clicks', note: 'a click on a link or button after which nothing changed for a second' },
  { id: 'error_click', label: 'Error clicks', note: 'a click followed by an uncaught error within a second' },
];

/** Elements listed per signal. */
const FRUSTRATION_LIMIT = 20;

/** The page. */
export function ErrorsPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const errors = useResource((signal) => reports.errors(api, report.query, signal), [api, report.queryKey]);
  const frustration = useResource((signal) => reports.frustration(api, report.query, FRUSTRATION_LIMIT, signal), [api, report.queryKey]);
  const [open, setOpen] = useState<string | null>(null);
  const [signalTab, setSignalTab] = useState<FrustrationSignal>('rage_click');
  const shown = SIGNALS.find((s) => s.id === signalTab) ?? SIGNALS[0]!;
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
                      {formatCountOf(g.visitors, 'visitor', 'visitors')} · last {formatDateTime(g.last_seen)}
                    </span>
                  </button>
                  {open === g.message && <pre className="stack">{g.last_stack ?? 'No stack was recorded.'}</pre>}
                </li>
              ))}
            </ul>
          )
        }
      </Panel>
      <Panel title="Frustration signals" resource={frustration} testId="frustration">
        {(answer) => (
          <>
            <div className="tabs" role="tablist" aria-label="Frustration signals">
              {SIGNALS.map((s) => (
                <button
                  key={s.id}
                  type="button"
                  role="tab"
                  id={`signal-tab-${s.id}`}
                  aria-selected={signalTab === s.id}
                  aria-controls="signal-tabpanel"
                  className={signalTab === s.id ? 'tab active' : 'tab'}
                  onClick={() => setSignalTab(s.id)}
                  data-testid={`signal-tab-${s.id}`}
                >
                  {s.label} ({formatCount(answer.signals[s.id]?.length ?? 0)})
                </button>
              ))}
            </div>
            <div role="tabpanel" id="signal-tabpanel" aria-labelledby={`signal-tab-${shown.id}`}>
              <p className="muted small">{shown.note}; most frequent first.</p>
              <FrustrationTable rows={answer.signals[shown.id] ?? []} label={shown.label} />
            </div>
          </>
        )}
      </Panel>
    </div>
  );
}
