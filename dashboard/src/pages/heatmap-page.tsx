/**
 * Heatmaps of one page for the view's range and filters: where its visitors clicked, placed on the
 * elements they clicked, and how far down its page views were seen, drawn over a recording's
 * snapshot of the page (else the live page), with the same numbers in tables. The page is the
 * view's `page` filter (chosen here from the most viewed pages), so a link shares it.
 */
import { type ReactNode, useState } from 'react';
import { Panel } from '../components/panel.js';
import { ViewBar } from '../components/view-bar.js';
import * as reports from '../api/reports.js';
import { findBackdrop } from '../heatmap/backdrop-source.js';
import { heatmap } from '../heatmap/heatmap-api.js';
import { HeatmapMap } from '../heatmap/heatmap-map.js';
import { ClickTable, ScrollTable } from '../heatmap/heatmap-tables.js';
import { useApi } from '../lib/api-context.js';
import { formatCountOf } from '../lib/format.js';
import { useReportQuery } from '../lib/use-report-query.js';
import { useResource } from '../lib/use-resource.js';
import '../heatmap/heatmap.css';

/** Pages offered in the chooser: the most viewed. */
const PAGE_CHOICES = 50;

/** The page. */
export function HeatmapPage(): ReactNode {
  const api = useApi();
  const report = useReportQuery();
  const { view, setView, query, queryKey } = report;
  const { page: chosen, ...others } = query.filters;
  const pages = useResource((signal) => reports.top(api, { ...query, filters: others }, 'page', PAGE_CHOICES, signal), [api, queryKey]);
  const first = pages.state === 'ready' ? (pages.value.rows[0]?.value ?? null) : null;
  const path = chosen ?? first;
  const answer = useResource((signal) => (path === null ? Promise.resolve(null) : heatmap(api, query, path, signal)), [api, queryKey, path]);
  const source = useResource((signal) => (path === null ? Promise.resolve(null) : findBackdrop(api, query, path, signal)), [api, queryKey, path]);
  const [showClicks, setShowClicks] = useState(true);
  const [showScroll, setShowScroll] = useState(true);
  const [unplaced, setUnplaced] = useState<{ key: string; set: ReadonlySet<string> | null } | null>(null);
  const placedKey = `${queryKey}:${path ?? ''}`;

  const choices = pages.state === 'ready' ? pages.value.rows.map((r) => r.value) : [];
  if (path !== null && !choices.includes(path)) choices.unshift(path);

  return (
    <div className="page">
      <ViewBar title="Heatmaps" report={report} note="Clicks placed on the elements clicked, and how far down the page was seen" />
      <div className="toolbar heatmap-controls">
        <label>
          Page{' '}
          <select
            value={path ?? ''}
            disabled={choices.length === 0}
            onChange={(e) => setView({ ...view, filters: { ...view.filters, page: e.target.value } })}
            data-testid="heatmap-path"
          >
            {choices.length === 0 && <option value="">No page views in this range</option>}
            {choices.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={showClicks} onChange={(e) => setShowClicks(e.target.checked)} /> Clicks
        </label>
        <label>
          <input type="checkbox" checked={showScroll} onChange={(e) => setShowScroll(e.target.checked)} /> Scroll depth
        </label>
      </div>
      <Panel title="Map" resource={answer} testId="heatmap">
        {(value) =>
          value === null ? (
            <p className="muted">Choose a page.</p>
          ) : (
            <>
              <p className="muted small" data-testid="heatmap-summary">
                {formatCountOf(value.clicks.total, 'click', 'clicks')} · {formatCountOf(value.scroll.page_views, 'page view', 'page views')} with a scroll depth ·{' '}
                {source.state === 'ready' && source.value !== null
                  ? source.value.kind === 'snapshot'
                    ? `drawn over a recording of session ${source.value.sessionId.slice(0, 8)}… at ${source.value.moment.width} px`
                    : source.value.kind === 'live'
                      ? 'drawn over the live page (no recording of it in this range; clicks are listed below)'
                      : 'no recording of this page in this range, and no address to show it live: the numbers are below'
                  : source.state === 'error'
                    ? source.message
                    : 'finding a recording of the page…'}
              </p>
              {source.state === 'ready' && source.value !== null && source.value.kind !== 'none' && (
                <HeatmapMap
                  key={placedKey}
                  answer={value}
                  source={source.value}
                  showClicks={showClicks}
                  showScroll={showScroll}
                  onPlaced={(set) => setUnplaced({ key: placedKey, set })}
                />
              )}
            </>
          )
        }
      </Panel>
      <div className="grid">
        <Panel title="Clicks by element" resource={answer} testId="heatmap-clicks">
          {(value) => (value === null ? null : <ClickTable answer={value} unplaced={unplaced?.key === placedKey ? unplaced.set : null} />)}
        </Panel>
        <Panel title="Scroll depth" resource={answer} testId="heatmap-scroll">
          {(value) => (value === null ? null : <ScrollTable answer={value} />)}
        </Panel>
      </div>
    </div>
  );
}
