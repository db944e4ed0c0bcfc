/**
 * The heatmap's numbers as tables: the text alternative of the map (the spots and bands are hidden
 * from screen readers), and the place for what the map cannot show (an element the backdrop does
 * not have, clicks without a position).
 */
import type { ReactNode } from 'react';
import { ScrollX } from '../components/scroll-x.js';
import { formatCount, formatCountOf, formatPercent } from '../lib/format.js';
import type { HeatmapAnswer } from './heatmap-api.js';

/** Clicks by element, with whether the map shows them. */
export function ClickTable({ answer, unplaced }: { answer: HeatmapAnswer; unplaced: ReadonlySet<string> | null }): ReactNode {
  const { total, elements } = answer.clicks;
  if (elements.length === 0) return <p className="muted">No clicks on this page in this range.</p>;
  return (
    <ScrollX label="Clicks by element">
      <table data-testid="click-table">
        <caption className="muted small">
          {formatCountOf(total, 'click', 'clicks')} on {answer.path}
        </caption>
        <thead>
          <tr>
            <th scope="col">Element</th>
            <th scope="col" className="num">
              Clicks
            </th>
            <th scope="col" className="num">
              Share
            </th>
            <th scope="col">On the map</th>
          </tr>
        </thead>
        <tbody>
          {elements.map((e) => {
            const positioned = e.cells.reduce((sum, c) => sum + c.count, 0);
            return (
              <tr key={e.selector}>
                <td>
                  <code>{e.selector === '' ? '(no selector)' : e.selector}</code>
                </td>
                <td className="num">{formatCount(e.count)}</td>
                <td className="num">{formatPercent(total === 0 ? null : e.count / total)}</td>
                <td>
                  {unplaced === null
                    ? '—'
                    : unplaced.has(e.selector)
                      ? 'not on this page'
                      : positioned < e.count
                        ? `${formatCount(positioned)} with a position`
                        : 'yes'}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollX>
  );
}

/** Page views reaching each depth. */
export function ScrollTable({ answer }: { answer: HeatmapAnswer }): ReactNode {
  const { page_views: views, depths } = answer.scroll;
  if (views === 0) return <p className="muted">No scroll depths on this page in this range.</p>;
  return (
    <ScrollX label="Scroll depth">
      <table data-testid="scroll-table">
        <caption className="muted small">{formatCountOf(views, 'page view', 'page views')} with a scroll depth</caption>
        <thead>
          <tr>
            <th scope="col">Reached</th>
            <th scope="col" className="num">
              Page views
            </th>
            <th scope="col" className="num">
              Share
            </th>
          </tr>
        </thead>
        <tbody>
          {depths.map((d) => (
            <tr key={d.depth}>
              <td>{d.depth}% of the page</td>
              <td className="num">{formatCount(d.page_views)}</td>
              <td className="num">{formatPercent(d.share)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollX>
  );
}
