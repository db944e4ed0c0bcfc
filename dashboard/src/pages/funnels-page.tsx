/**
 * Funnels: pick steps from the project's event types and pages (the top values of the view's
 * range), then see how many sessions reached each step in order, with conversion and drop-off,
 * for the view's range and filters. The steps are part of the view in the address: a funnel can be
 * shared as a link and survives a reload.
 */
import { type ReactNode, useState } from 'react';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import { FunnelChart } from '../components/funnel-chart.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { type FunnelStep, MAX_STEPS, MIN_STEPS, addStep, parseStep, removeStep, stepLabel, stepParam } from '../lib/funnel-steps.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';

/** The page. */
export function FunnelsPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { query, queryKey, view, setView } = report;
  const { steps } = view;
  const setSteps = (next: FunnelStep[]): void => setView({ ...view, steps: next });
  // The step choices ignore the filters: a filter must not hide a step one wants to add.
  const unfiltered = { ...query, filters: {} };
  const [choice, setChoice] = useState('');
  const options = useResource(
    async (signal) => {
      const [types, pages] = await Promise.all([reports.top(api, unfiltered, 'event_type', 50, signal), reports.top(api, unfiltered, 'page', 50, signal)]);
      return [
        ...pages.rows.filter((r) => r.value !== '').map((r): FunnelStep => ({ kind: 'page', value: r.value })),
        ...types.rows.map((r): FunnelStep => ({ kind: 'event', value: r.value })),
      ];
    },
    [api, query.from, query.to],
  );
  const key = steps.map(stepParam).join('\n');
  const result = useResource(
    (signal) => (steps.length >= MIN_STEPS ? reports.funnel(api, query, steps, signal) : Promise.resolve(null)),
    [api, queryKey, key],
  );
  const add = (): void => {
    const step = parseStep(choice);
    if (step !== null) setSteps(addStep(steps, step));
  };

  return (
    <div className="page">
      <ViewBar title="Funnels" report={report} note="Sessions that reached each step, in order" />
      <Panel title="Steps" resource={options} testId="funnel-builder">
        {(list) => (
          <div className="funnel-builder">
            <ol className="steps">
              {steps.map((s, i) => (
                <li key={`${i}-${stepParam(s)}`}>
                  <span>
                    {i + 1}. {stepLabel(s)}
                  </span>
                  <button type="button" className="link" aria-label={`Remove step ${i + 1}`} onClick={() => setSteps(removeStep(steps, i))}>
                    Remove
                  </button>
                </li>
              ))}
            </ol>
            <div className="add-step">
              <label>
                <span className="visually-hidden">Step to add</span>
                <select value={choice} onChange={(e) => setChoice(e.target.value)} aria-label="Step to add">
                  <option value="">Choose a page or an event…</option>
                  <optgroup label="Pages">
                    {list
                      .filter((s) => s.kind === 'page')
                      .map((s) => (
                        <option key={stepParam(s)} value={stepParam(s)}>
                          {s.value}
                        </option>
                      ))}
                  </optgroup>
                  <optgroup label="Events">
                    {list
                      .filter((s) => s.kind === 'event')
                      .map((s) => (
                        <option key={stepParam(s)} value={stepParam(s)}>
                          {s.value}
                        </option>
                      ))}
                  </optgroup>
                </select>
              </label>
              <button type="button" onClick={add} disabled={choice === '' || steps.length >= MAX_STEPS}>
                Add step
              </button>
              {steps.length > 0 && (
                <button type="button" className="link" onClick={() => setSteps([])}>
                  Clear
                </button>
              )}
            </div>
          </div>
        )}
      </Panel>
      <Panel title="Conversion" resource={result} testId="funnel-result">
        {(answer) => (answer === null ? <p className="muted">Add at least {MIN_STEPS} steps.</p> : <FunnelChart steps={answer.steps} />)}
      </Panel>
    </div>
  );
}
