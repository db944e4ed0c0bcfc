/**
 * The overview: a range, the headline numbers, visitors and page views over time, top pages,
 * sources and devices. Each panel loads and fails on its own.
 */
import { type ReactNode, useMemo, useState } from 'react';
import { Panel } from '../components/panel.js';
import { RangePicker } from '../components/range-picker.js';
import { StatCard } from '../components/stat-card.js';
import { LineChart } from '../components/line-chart.js';
import { TopPanel } from '../components/top-panel.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatBucket, formatCount, formatDuration, formatPercent } from '../lib/format.js';
import { type RangeKey, rangeFor } from '../lib/range.js';
import { useResource } from '../lib/use-resource.js';

/** The page. */
export function OverviewPage(): ReactNode {
  const api = useApi();
  const [key, setKey] = useState<RangeKey>('7d');
  // A range is fixed when it is picked: every panel asks about the same [from, to).
  const [pickedAt, setPickedAt] = useState(() => Date.now());
  const range = useMemo(() => rangeFor(key, pickedAt), [key, pickedAt]);
  const pick = (next: RangeKey): void => {
    setKey(next);
    setPickedAt(Date.now());
  };
  const series = useResource((signal) => reports.timeseries(api, range, range.interval, signal), [api, range]);
  const stats = useResource((signal) => reports.sessionStats(api, range, signal), [api, range]);

  return (
    <div className="page" data-testid="overview" data-from={new Date(range.from).toISOString()} data-to={new Date(range.to).toISOString()}>
      <div className="toolbar">
        <h1>Overview</h1>
        <RangePicker value={key} onChange={pick} />
      </div>
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
      <div className="grid">
        <TopPanel title="Top pages" dimension="page" label="Page" range={range} countLabel="Views" count="events" />
        <TopPanel title="Referrers" dimension="referrer" label="Referrer" range={range} emptyValue="(direct)" />
        <TopPanel title="Channels" dimension="channel" label="Channel" range={range} />
        <TopPanel title="Browsers" dimension="browser" label="Browser" range={range} emptyValue="(unknown)" />
        <TopPanel title="Operating systems" dimension="os" label="OS" range={range} emptyValue="(unknown)" />
        <TopPanel title="Devices" dimension="device" label="Device" range={range} emptyValue="(unknown)" />
      </div>
    </div>
  );
}
