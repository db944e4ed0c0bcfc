/**
 * The map: the backdrop (a recording's snapshot, else the live page in a sandboxed frame) at the
 * width the page was viewed at, scaled down to the panel as a whole with the clicks and the scroll
 * map drawn over it in the page's own pixels. Over the live page the clicks cannot be placed (its
 * document is another origin's, closed to the dashboard): the table lists them.
 */
import { type ReactNode, useCallback, useMemo, useRef, useState } from 'react';
import { useElementWidth } from '../lib/use-element-width.js';
import type { BackdropSource } from './backdrop-source.js';
import type { HeatmapAnswer } from './heatmap-api.js';
import { ClickSpots, ScrollBands } from './heatmap-overlays.js';
import { type PlacedClicks, placeClicks } from './place-clicks.js';
import { type RenderedPage, SnapshotBackdrop } from './snapshot-backdrop.js';

/**
 * The live page's frame, px: a desktop width, and two screens of it (its document's height cannot
 * be read from another origin; the scroll map is drawn over the frame as if it were the page).
 */
const LIVE_WIDTH = 1280;
const LIVE_HEIGHT = 1600;

interface HeatmapMapProps {
  answer: HeatmapAnswer;
  source: Exclude<BackdropSource, { kind: 'none' }>;
  showClicks: boolean;
  showScroll: boolean;
  /** Told which selectors the backdrop lacks (null over the live page). */
  onPlaced: (unplaced: ReadonlySet<string> | null) => void;
}

/** The map. */
export function HeatmapMap({ answer, source, showClicks, showScroll, onPlaced }: HeatmapMapProps): ReactNode {
  const outer = useRef<HTMLDivElement>(null);
  const available = useElementWidth(outer, 800);
  const [page, setPage] = useState<{ width: number; height: number; placed: PlacedClicks | null } | null>(
    source.kind === 'live' ? { width: LIVE_WIDTH, height: LIVE_HEIGHT, placed: null } : null,
  );
  const placedFor = useRef(onPlaced);
  placedFor.current = onPlaced;
  const { elements } = answer.clicks;
  const onPage = useCallback(
    (rendered: RenderedPage) => {
      const placed = placeClicks(rendered.doc, elements, answer.grid);
      setPage({ width: rendered.width, height: rendered.height, placed });
      placedFor.current(new Set(placed.unplaced));
    },
    [elements, answer.grid],
  );
  const width = page?.width ?? (source.kind === 'snapshot' ? source.moment.width : LIVE_WIDTH);
  const height = page?.height ?? (source.kind === 'snapshot' ? source.moment.height : LIVE_HEIGHT);
  const scale = Math.min(1, available / width);
  const stageStyle = useMemo(
    () => ({ width, height, transform: `scale(${scale})`, ['--heatmap-scale' as string]: String(scale) }),
    [width, height, scale],
  );

  return (
    <div ref={outer} className="heatmap-map" data-testid="heatmap-map" data-backdrop={source.kind}>
      <div className="heatmap-frame" style={{ height: height * scale }}>
        <div className="heatmap-stage" style={stageStyle}>
          {source.kind === 'snapshot' ? (
            <SnapshotBackdrop events={source.events} moment={source.moment} onPage={onPage} />
          ) : (
            <iframe
              className="heatmap-live"
              title={`The page ${answer.path}, live`}
              src={source.url}
              width={LIVE_WIDTH}
              height={LIVE_HEIGHT}
              // No scripts, another origin than the dashboard's: the page can neither run nor reach it.
              sandbox=""
              referrerPolicy="no-referrer"
              tabIndex={-1}
            />
          )}
          {showScroll && answer.scroll.page_views > 0 && <ScrollBands depths={answer.scroll.depths} width={width} height={height} />}
          {showClicks && page?.placed != null && <ClickSpots spots={page.placed.spots} max={page.placed.max} width={width} height={height} scale={scale} />}
        </div>
      </div>
    </div>
  );
}
