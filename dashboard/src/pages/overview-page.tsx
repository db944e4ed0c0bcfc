/**
 * The overview: the headline numbers, each with its change against the previous period, visitors
 * and page views over time, top pages, sources, devices, countries and custom events, for the
 * view's range and filters, and the visitors of the last minutes beside the title. A value in a top
 * list (but custom events: as a filter they would empty every page-view list) adds a filter to
 * every panel. Each panel loads and fails on its own.
 */
import type { ReactNode } from 'react';
import { ChangeNote } from '../components/change-note.js';
import { CountryText } from '../components/country-text.js';
import { LineChart } from '../components/line-chart.js';
import { Panel } from '../components/panel.js';
import { StatCard } from '../components/stat-card.js';
import { TopPanel } from '../components/top-panel.js';
import { ViewBar } from '../components/view-bar.js';
import { VisitorsNow } from '../components/visitors-now.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatBucket, formatCount, formatDuration, formatPercent } from '../lib/format.js';
import { type GoodDirection, type PeriodChange, percentChange, pointChange, previousPeriodName } from '../lib/period-change.js';
import { useComparison } from '../lib/use-comparison.js';
import { useReportQuery } from '../lib/use-report-query.js';
import type { Resource } from '../lib/use-resource.js';
import { type FilterDimension, withFilter } from '../lib/view-state.js';

interface HeadlineProps {
  label: string;
  testId: string;
  current: number | null;
  /** The previous period's value; undefined while it loads. */
  previous: number | null | undefined;
  format: (value: number | null) => string;
  /** `percentChange` for counts and durations, `pointChange` for rates. */
  compare: (current: number | null, previous: number | null) => PeriodChange;
  good: GoodDirection;
  /** The previous period as the change's sentence names it. */
  period: string;
}

/** A headline number with its change. */
function Headline({ label, testId, current, previous, format, compare, good, period }: HeadlineProps): ReactNode {
  const change = previous === undefined ? null : compare(current, previous);
  const note = <ChangeNote change={change} good={good} period={period} testId={`${testId}-change`} />;
  return <StatCard label={label} value={format(current)} testId={testId} change={note} />;
}

const valueOf = <T,>(resource: Resource<T>): T | undefined => (resource.state === 'ready' ? resource.value : undefined);

/** A row of the countries list: the code by its name and flag. */
const countryText = (code: string): ReactNode => <CountryText code={code} />;

/** The page. */
export function OverviewPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { range, query, queryKey, view, setView } = report;
  // The chart and the traffic numbers share the view's answer; the previous period's series is the
  // same question moved back (same interval: the two spans are equally long), read for its totals.
  const traffic = useComparison((q, signal) => reports.timeseries(api, q, range.interval, signal), query, [api, queryKey, range.interval]);
  const stats = useComparison((q, signal) => reports.sessionStats(api, q, signal), query, [api, queryKey]);
  const series = traffic.current;
  const period = previousPeriodName(view.range, range);
  const onFilter = (dimension: FilterDimension, value: string): void => setView(withFilter(view, dimension, value));
  const top = { query, queryKey, onFilter };
  // More is better but for the bounce rate, a rate whose change is in points, not percent.
  const counts = { format: formatCount, compare: percentChange, good: 'up', period } as const;
  const rate = { format: formatPercent, compare: pointChange, good: 'down', period } as const;
  const duration = { format: formatDuration, compare: percentChange, good: 'up', period } as const;

  return (
    <div className="page" data-testid="overview" data-from={new Date(range.from).toISOString()} data-to={new Date(range.to).toISOString()}>
      <ViewBar title="Overview" report={report} badge={<VisitorsNow />} />
      <div className="stats">
        <Panel title="Traffic" resource={series} className="span-2" testId="traffic">
          {(s) => {
            const before = valueOf(traffic.previous)?.totals;
            return (
              <div className="stat-row">
                <Headline label="Visitors" testId="stat-visitors" current={s.totals.visitors} previous={before?.visitors} {...counts} />
                <Headline label="Page views" testId="stat-page-views" current={s.totals.page_views} previous={before?.page_views} {...counts} />
                <Headline label="Events" testId="stat-events" current={s.totals.events} previous={before?.events} {...counts} />
              </div>
            );
          }}
        </Panel>
        <Panel title="Sessions" resource={stats.current} className="span-2" testId="session-stats">
          {(s) => {
            const before = valueOf(stats.previous);
            return (
              <div className="stat-row">
                <Headline label="Sessions" testId="stat-sessions" current={s.sessions} previous={before?.sessions} {...counts} />
                <Headline label="Bounce rate" testId="stat-bounce-rate" current={s.bounce_rate} previous={before?.bounce_rate} {...rate} />
                <Headline label="Avg. duration" testId="stat-duration" current={s.average_duration_ms} previous={before?.average_duration_ms} {...duration} />
              </div>
            );
          }}
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
        <TopPanel title="Countries" dimension="country" filter="country" label="Country" emptyValue="(unknown)" format={countryText} {...top} />
        <TopPanel title="Custom events" dimension="custom_event" label="Event" countLabel="Events" count="events" {...top} />
      </div>
    </div>
  );
}
