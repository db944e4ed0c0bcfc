/**
 * The overview: the headline numbers, visitors and page views over time, top pages, sources,
 * devices and custom events, for the view's range and filters. A value in a top list (but custom
 * events: as a filter they would empty every page-view list) adds a filter to every panel. Each panel loads and fails on its own.
 */
import type { ReactNode } from 'react';
import { LineChart } from '../components/line-chart.js';
import { Panel } from '../components/panel.js';
import { StatCard } from '../components/stat-card.js';
import { TopPanel } from '../components/top-panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatBucket, formatCount, formatDuration, formatPercent } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';
import { type FilterDimension, withFilter } from '../lib/view-state.js';

/** The page. */
export function OverviewPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { range, query, queryKey, view, setView } = report;
  const series = useResource((signal) => reports.timeseries(api, query, range.interval, signal), [api, queryKey, range.interval]);
  const stats = useResource((signal) => reports.sessionStats(api, query, signal), [api, queryKey]);
  const onFilter = (dimension: FilterDimension, value: string): void => setView(withFilter(view, dimension, value));
  const top = { query, queryKey, onFilter };

  return (
    <div className="page" data-testid="overview" data-from={new Date(range.from).toISOString()} data-to={new Date(range.to).toISOString()}>
      <ViewBar title="Overview" report={report} />
      <div className="stats">
        <Panel title="Traffic" resource={series} className="span-2" testId="traffic">
          {(s) => (
            <div className="stat-row">
              <StatCard label="Visitors" value={formatCount(s.totals.visitors)} testId="stat-visitors" />
              <StatCard label="Page views" value={formatCount(s.totals.page_views)} testId="stat-page-views" />
              <StatCard label="Events" value={formatCount(s.totals.events)} testId="stat-events" />
            </div>
          )}
        </Panel>
        <Panel title="Sessions" resource={stats} className="span-2" testId="session-stats">
          {(s) => (
            <div className="stat-row">
              <StatCard label="Sessions" value={formatCount(s.sessions)} testId="stat-sessions" />
              <StatCard label="Bounce rate" value={formatPercent(s.bounce_rate)} testId="stat-bounce-rate" />
              <StatCard label="Avg. duration" value={formatDuration(s.average_duration_ms)} testId="stat-duration" />
            </div>
          )}
        </Panel>
      </div>
      <Panel title={range.interval === 'hour' ? 'By hour' : 'By day'} resource={series} testId="chart">
        {(s) => (
          <LineChart
            title="Page views and visitors"
            labels={s.points.map((p) => formatBucket(p.time, s.interval))}
            series={[
              { name: 'Page views', values: s.points.map((p) => p.page_views), color: 'var(--accent)' },
              { name: 'Visitors', values: s.points.map((p) => p.visitors), color: 'var(--success)' },
            ]}
          />
        )}
      </Panel>
      <p className="muted small hint">Choose a value in a list to see every panel for it alone.</p>
      <div className="grid">
        <TopPanel title="Top pages" dimension="page" filter="page" label="Page" countLabel="Views" count="events" {...top} />
        <TopPanel title="Referrers" dimension="referrer" filter="referrer" label="Referrer" emptyValue="(direct)" {...top} />
        <TopPanel title="Channels" dimension="channel" filter="channel" label="Channel" {...top} />
        <TopPanel title="Browsers" dimension="browser" filter="browser" label="Browser" emptyValue="(unknown)" {...top} />
        <TopPanel title="Operating systems" dimension="os" filter="os" label="OS" emptyValue="(unknown)" {...top} />
        <TopPanel title="Devices" dimension="device" filter="device" label="Device" emptyValue="(unknown)" {...top} />
        <TopPanel title="Custom events" dimension="custom_event" label="Event" countLabel="Events" count="events" {...top} />
      </div>
    </div>
  );
}
