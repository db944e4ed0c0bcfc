/**
 * Live: the last minutes, per minute, and the newest events, both with the view's filters,
 * refreshed while the tab is visible.
 */
import type { ReactNode } from 'react';
import { EventTable } from '../components/event-table.js';
import { LineChart } from '../components/line-chart.js';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import { StatCard } from '../components/stat-card.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatBucket, formatCount } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';
import { filtersKey } from '../lib/view-state.js';

/** How far back the live page looks, minutes. */
const MINUTES = 30;
/** How often it asks again, ms. */
const REFRESH_MS = 5000;

/** The page. */
export function LivePage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { filters } = report.query;
  const live = useResource((signal) => reports.live(api, MINUTES, filters, signal), [api, filtersKey(filters)], REFRESH_MS);
  const recent = useResource((signal) => reports.events(api, { filters, from: Date.now() - MINUTES * 60_000, limit: 50 }, signal), [api, filtersKey(filters)], REFRESH_MS);
  return (
    <div className="page" data-testid="live">
      <ViewBar title="Live" report={report} withRange={false} note={`Last ${MINUTES} minutes · every ${REFRESH_MS / 1000} s while this tab is visible`} />
      <Panel title="Per minute" resource={live} testId="live-totals">
        {(l) => (
          <>
            <div className="stat-row">
              <StatCard label="Visitors" value={formatCount(l.totals.visitors)} testId="live-visitors" />
              <StatCard label="Page views" value={formatCount(l.totals.page_views)} />
              <StatCard label="Events" value={formatCount(l.totals.events)} testId="live-events" />
            </div>
            <LineChart
              title="Events per minute"
              labels={l.points.map((p) => formatBucket(p.time, 'minute'))}
              series={[{ name: 'Events', values: l.points.map((p) => p.events), color: 'var(--accent)' }]}
            />
          </>
        )}
      </Panel>
      <Panel title="Newest events" resource={recent} testId="live-events-list">
        {(answer) => <EventTable events={answer.events} />}
      </Panel>
    </div>
  );
}
