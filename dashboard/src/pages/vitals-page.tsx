/** Web vitals per page: the 75th percentile of LCP, INP, CLS and FCP over the last 7 days. */
import { type ReactNode, useMemo } from 'react';
import { Panel } from '../components/panel.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatVital } from '../lib/format.js';
import { rangeFor } from '../lib/range.js';
import { useResource } from '../lib/use-resource.js';
import { vitalRating } from '../lib/vital-rating.js';

const METRICS = ['lcp', 'inp', 'cls', 'fcp'] as const;

/** The page. */
export function VitalsPage(): ReactNode {
  const api = useApi();
  const range = useMemo(() => rangeFor('7d', Date.now()), []);
  const vitals = useResource((signal) => reports.vitals(api, range, signal), [api, range]);
  return (
    <div className="page">
      <div className="toolbar">
        <h1>Web vitals</h1>
        <span className="muted">p75, last 7 days</span>
      </div>
      <Panel title="Per page" resource={vitals} testId="vitals">
        {(answer) =>
          answer.pages.length === 0 ? (
            <p className="muted">No performance samples in this range.</p>
          ) : (
            <div className="scroll-x">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Page</th>
                    {METRICS.map((m) => (
                      <th key={m} scope="col" className="num">
                        {m.toUpperCase()}
                      </th>
                    ))}
                    <th scope="col" className="num">
                      Samples
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {answer.pages.map((p) => (
                    <tr key={p.path}>
                      <td>{p.path === '' ? '(unknown)' : p.path}</td>
                      {METRICS.map((m) => (
                        <td key={m} className={`num rating-${vitalRating(m, p[m])}`}>
                          {formatVital(m, p[m])}
                        </td>
                      ))}
                      <td className="num">{formatCount(p.samples)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Panel>
    </div>
  );
}
