/** Web vitals per page: the 75th percentile of LCP, INP, CLS and FCP for the view's range and filters. */
import type { ReactNode } from 'react';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatVital } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';
import { vitalRating } from '../lib/vital-rating.js';
import { ScrollX } from '../components/scroll-x.js';

const METRICS = ['lcp', 'inp', 'cls', 'fcp'] as const;

/** The page. */
export function VitalsPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const vitals = useResource((signal) => reports.vitals(api, report.query, signal), [api, report.queryKey]);
  return (
    <div className="page">
      <ViewBar title="Web vitals" report={report} note="75th percentile per page" />
      <Panel title="Per page" resource={vitals} testId="vitals">
        {(answer) =>
          answer.pages.length === 0 ? (
            <p className="muted">No performance samples in this range.</p>
          ) : (
            <ScrollX label="Web vitals per page">
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
            </ScrollX>
          )
        }
      </Panel>
    </div>
  );
}
