/**
 * Experiments: pick an experiment and a conversion event, and see per variant the visitors exposed,
 * those who converted after their first exposure, and the rate, for the view's range and filters
 * (`GET /api/v1/reports/experiments/:name`); the experiments to pick from are those of
 * `GET /api/v1/reports/experiments`. The choices live in the URL's query with the view.
 */
import type { ReactNode } from 'react';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import type { ExperimentAnswer } from '../api/wire-types.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatPercent } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';
import { ScrollX } from '../components/scroll-x.js';

/** Event types that make no sense as a conversion. */
const NOT_CONVERSIONS = new Set(['experiment_exposure']);
/** How many experiments the picker offers (the endpoint's most). */
const EXPERIMENTS_LISTED = 100;

/** The variants' table. */
function VariantTable({ answer }: { answer: ExperimentAnswer }): ReactNode {
  if (answer.variants.length === 0) return <p className="muted">No exposure to this experiment in this range.</p>;
  const best = Math.max(0, ...answer.variants.map((v) => v.conversion_rate ?? 0));
  return (
    <ScrollX label="Variants">
      <table className="variants">
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col" className="num">
              Exposed
            </th>
            <th scope="col" className="num">
              Converted
            </th>
            <th scope="col" className="num rate-col">
              Rate
            </th>
          </tr>
        </thead>
        <tbody>
          {answer.variants.map((v) => (
            <tr key={v.variant} data-testid="variant-row">
              <td data-testid="variant-name" className="variant-name">
                <code>{v.variant}</code>
              </td>
              <td className="num" data-testid="variant-exposures">
                {formatCount(v.exposures)}
              </td>
              <td className="num" data-testid="variant-conversions">
                {formatCount(v.conversions)}
              </td>
              <td className="num rate-col">
                <span className="rate">
                  {v.conversion_rate !== null && (
                    <span className="rate-track" aria-hidden="true">
                      <span className={`rate-bar${v.conversion_rate === best && best > 0 ? ' best' : ''}`} style={{ width: `${v.conversion_rate * 100}%` }} />
                    </span>
                  )}
                  <span data-testid="variant-rate">{formatPercent(v.conversion_rate)}</span>
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollX>
  );
}

/** The page. */
export function ExperimentsPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { view, setView, query, queryKey } = report;
  // The choices ignore the filters, as the conversion choices do: a filter must not hide an experiment.
  const names = useResource(
    async (signal) => (await reports.experiments(api, { ...query, filters: {} }, EXPERIMENTS_LISTED, signal)).experiments.map((e) => e.experiment),
    [api, query.from, query.to],
  );
  // Conversion choices ignore the filters: a filter must not hide the event one wants to measure.
  const types = useResource(
    async (signal) => (await reports.top(api, { ...query, filters: {} }, 'event_type', 50, signal)).rows.map((r) => r.value).filter((t) => !NOT_CONVERSIONS.has(t)),
    [api, query.from, query.to],
  );
  const known = names.state === 'ready' ? names.value : [];
  const experiment = view.experiment ?? known[0] ?? null;
  const result = useResource(
    (signal) => (experiment === null ? Promise.resolve(null) : reports.experiment(api, query, experiment, view.conversion, signal)),
    [api, queryKey, experiment, view.conversion],
  );
  // The shown experiment goes into the address with the first choice, so a shared link keeps it.
  const experimentOptions = experiment !== null && !known.includes(experiment) ? [experiment, ...known] : known;
  const typeOptions = types.state === 'ready' ? types.value : [];
  const conversionOptions = view.conversion !== null && !typeOptions.includes(view.conversion) ? [view.conversion, ...typeOptions] : typeOptions;

  return (
    <div className="page" data-testid="experiments">
      <ViewBar title="Experiments" report={report} note="Visitors exposed to each variant, and those who converted after their exposure" />
      <Panel title="Experiment and conversion" resource={names} testId="experiment-picker">
        {() =>
          experimentOptions.length === 0 ? (
            <p className="muted">
              No <code>experiment_exposure</code> event in this range: the client sends one the first time <code>getVariant()</code> assigns a visitor.
            </p>
          ) : (
            <div className="pickers">
              <label>
                Experiment
                <select aria-label="Experiment" value={experiment ?? ''} onChange={(e) => setView({ ...view, experiment: e.target.value })}>
                  {experimentOptions.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Conversion event
                <select aria-label="Conversion event" value={view.conversion ?? ''} onChange={(e) => setView({ ...view, experiment, conversion: e.target.value === '' ? null : e.target.value })}>
                  <option value="">None (exposures only)</option>
                  {conversionOptions.map((type) => (
                    <option key={type} value={type}>
                      {type}
                    </option>
                  ))}
                </select>
              </label>
            </div>
          )
        }
      </Panel>
      {experiment !== null && (
        <Panel title={`Variants of ${experiment}`} resource={result} testId="experiment-result">
          {(answer) =>
            answer === null ? null : (
              <>
                <VariantTable answer={answer} />
                {answer.conversion === null && <p className="muted small">Choose a conversion event to see who converted.</p>}
              </>
            )
          }
        </Panel>
      )}
      <p className="muted small">The experiments listed are the {formatCount(EXPERIMENTS_LISTED)} with the most exposed visitors in the range.</p>
    </div>
  );
}
