/**
 * The elements of one frustration signal (docs/protocol.md, "GET /api/v1/reports/frustration"):
 * selector, page, events and sessions, and links to the replays of its latest sessions.
 */
import type { ReactNode } from 'react';
import type { FrustrationElement } from '../api/wire-types.js';
import { formatCount } from '../lib/format.js';
import { routeHref } from '../lib/route.js';
import { shortSessionId } from '../lib/session-id.js';
import { ScrollX } from './scroll-x.js';

interface FrustrationTableProps {
  rows: readonly FrustrationElement[];
  /** The signal's name, for the table's label and the empty line. */
  label: string;
}

/** The table, or a line saying there is nothing in this range. */
export function FrustrationTable({ rows, label }: FrustrationTableProps): ReactNode {
  if (rows.length === 0) return <p className="muted">No {label.toLowerCase()} in this range.</p>;
  return (
    <ScrollX label={label}>
      <table className="frustration">
        <thead>
          <tr>
            <th scope="col">Element</th>
            <th scope="col">Page</th>
            <th scope="col" className="num">
              Count
            </th>
            <th scope="col" className="num">
              Sessions
            </th>
            <th scope="col">Replays</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.selector}\n${row.page}`}>
              <td>
                <code className="selector" title={row.selector}>
                  {row.selector === '' ? '(no selector)' : row.selector}
                </code>
              </td>
              <td className="nowrap">{row.page === '' ? '(none)' : row.page}</td>
              <td className="num">{formatCount(row.count)}</td>
              <td className="num">{formatCount(row.sessions)}</td>
              <td>
                <div className="replay-links">
                  {row.session_ids.map((id) => (
                    <a key={id} href={routeHref({ page: 'replay', sessionId: id })} title={`Replay of session ${id}`}>
                      {shortSessionId(id)}
                    </a>
                  ))}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollX>
  );
}
