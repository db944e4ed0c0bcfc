/**
 * What the heatmap draws over its backdrop, in the backdrop's own pixels (the map scales the whole
 * stage): the clicks as spots, each a cell of an element's clicks at its place in the element
 * (`place-clicks.ts`), larger and warmer with more clicks; the scroll depth as bands down the page,
 * each step's share of page views that reached it written at its line. Both are pictures: the
 * table beside the map (`heatmap-tables.tsx`) has the same numbers for a screen reader.
 */
import type { ReactNode } from 'react';
import { formatPercent } from '../lib/format.js';
import type { ScrollStep } from './heatmap-api.js';
import type { ClickSpot } from './place-clicks.js';

/** Radius of a spot of the most clicks, px of the page. */
const MAX_RADIUS = 28;
const MIN_RADIUS = 7;

/**
 * The click spots over a `width` × `height` page, drawn at `scale`: spots grow as the page is
 * scaled down (up to 2.5 times), so that a phone still shows them.
 */
export function ClickSpots({ spots, max, width, height, scale }: { spots: readonly ClickSpot[]; max: number; width: number; height: number; scale: number }): ReactNode {
  const grow = Math.min(2.5, 1 / Math.max(scale, 0.01));
  return (
    <svg className="heatmap-layer" width={width} height={height} viewBox={`0 0 ${width} ${height}`} aria-hidden="true" data-testid="click-spots">
      <defs>
        <radialGradient id="heat-spot">
          <stop offset="0%" stopColor="#ff2d00" stopOpacity="0.9" />
          <stop offset="45%" stopColor="#ff9f00" stopOpacity="0.55" />
          <stop offset="100%" stopColor="#ffe600" stopOpacity="0" />
        </radialGradient>
      </defs>
      {spots.map((spot, i) => {
        const weight = max > 0 ? Math.sqrt(spot.count / max) : 0;
        return <circle key={i} cx={spot.x} cy={spot.y} r={(MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * weight) * grow} fill="url(#heat-spot)" data-count={spot.count} />;
      })}
    </svg>
  );
}

/** The colour of a share of page views: warm where most arrive, cold where few do. */
function bandColour(share: number): string {
  const hue = Math.round(220 * (1 - share)); // 0 red … 220 blue
  return `hsla(${hue}, 90%, 50%, 0.28)`;
}

/**
 * The scroll map over a `width` × `height` page: one gradient down the page, through each step's
 * colour at its depth (everyone sees the top), and at each step a line with the share of page
 * views that reached it.
 */
export function ScrollBands({ depths, width, height }: { depths: readonly ScrollStep[]; width: number; height: number }): ReactNode {
  const stops = [`${bandColour(1)} 0%`, ...depths.map((step) => `${bandColour(step.share ?? 0)} ${step.depth}%`)];
  return (
    <div className="heatmap-layer scroll-map" style={{ width, height, background: `linear-gradient(to bottom, ${stops.join(', ')})` }} aria-hidden="true" data-testid="scroll-bands">
      {depths.map((step) => (
        <div key={step.depth} className="scroll-line" style={{ top: `${step.depth}%` }}>
          <span className="scroll-band-label">
            {formatPercent(step.share)} reached {step.depth}%
          </span>
        </div>
      ))}
    </div>
  );
}
