/**
 * A time series as plain SVG: one line per series over shared buckets, a "nice" y axis, some
 * bucket labels, and the values of a bucket on hover or tap. No chart library: this is all the
 * dashboard draws.
 */
import { type ReactNode, useRef, useState } from 'react';
import { labelIndexes, linePath, niceCeiling } from '../lib/chart-geometry.js';
import { formatCount } from '../lib/format.js';
import { useElementWidth } from '../lib/use-element-width.js';

/** One line. */
export interface Series {
  name: string;
  values: readonly number[];
  /** A CSS color (a custom property works). */
  color: string;
}

interface LineChartProps {
  /** Labels of the buckets, as long as each series. */
  labels: readonly string[];
  series: readonly Series[];
  title: string;
}

/** Drawn at the figure's own width in CSS pixels, so text keeps its size at any width. */
const HEIGHT = 220;
const LEFT = 44;
const BOTTOM = 22;

/** The chart. */
export function LineChart({ labels, series, title }: LineChartProps): ReactNode {
  const [hover, setHover] = useState<number | null>(null);
  const figure = useRef<HTMLElement>(null);
  const width = useElementWidth(figure, 640);
  const top = niceCeiling(Math.max(0, ...series.flatMap((s) => s.values)));
  const plotW = width - LEFT - 8;
  const plotH = HEIGHT - BOTTOM - 8;
  const n = labels.length;
  const xAt = (i: number): number => LEFT + (n <= 1 ? plotW / 2 : (i * plotW) / (n - 1));
  const pick = (clientX: number, rect: DOMRect): void => {
    const x = ((clientX - rect.left) / rect.width) * width - LEFT;
    setHover(n === 0 ? null : Math.max(0, Math.min(n - 1, Math.round((x / plotW) * (n - 1)))));
  };
  return (
    <figure className="chart" ref={figure}>
      <svg
        viewBox={`0 0 ${width} ${HEIGHT}`}
        role="img"
        aria-label={title}
        onPointerMove={(e) => pick(e.clientX, e.currentTarget.getBoundingClientRect())}
        onPointerLeave={() => setHover(null)}
      >
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={LEFT} x2={width - 8} y1={8 + plotH * (1 - f)} y2={8 + plotH * (1 - f)} className="grid" />
            <text x={LEFT - 6} y={8 + plotH * (1 - f) + 4} textAnchor="end" className="axis">
              {Number.isInteger(top * f) ? formatCount(top * f) : (top * f).toFixed(1)}
            </text>
          </g>
        ))}
        {labelIndexes(n, Math.max(2, Math.floor(width / 110))).map((i) => (
          <text key={i} x={xAt(i)} y={HEIGHT - 6} textAnchor={i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle'} className="axis">
            {labels[i]}
          </text>
        ))}
        <g transform={`translate(${LEFT},8)`}>
          {series.map((s) => (
            <path key={s.name} d={linePath(s.values, plotW, plotH, top)} fill="none" stroke={s.color} strokeWidth={2} vectorEffect="non-scaling-stroke" />
          ))}
        </g>
        {hover !== null && <line x1={xAt(hover)} x2={xAt(hover)} y1={8} y2={8 + plotH} className="cursor" />}
      </svg>
      <figcaption className="legend">
        {series.map((s) => (
          <span key={s.name}>
            <i style={{ background: s.color }} /> {s.name}
            {hover !== null ? `: ${formatCount(s.values[hover] ?? 0)}` : ''}
          </span>
        ))}
        {hover !== null && <span className="muted">{labels[hover]}</span>}
      </figcaption>
    </figure>
  );
}
