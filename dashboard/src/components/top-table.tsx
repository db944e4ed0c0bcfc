/** A top-N list: value, a bar of its share, and its count. */
import type { ReactNode } from 'react';
import type { TopRow } from '../api/wire-types.js';
import { formatCount } from '../lib/format.js';

interface TopTableProps {
  rows: readonly TopRow[];
  /** Header of the value column. */
  label: string;
  /** What the count is. @default 'Visitors' */
  countLabel?: string;
  /** Which count to show. @default 'visitors' */
  count?: 'visitors' | 'events';
  /** Text for an empty value (no referrer, unknown device). @default '(none)' */
  emptyValue?: string;
}

/** The table, or a line saying there is nothing in this range. */
export function TopTable({ rows, label, countLabel = 'Visitors', count = 'visitors', emptyValue = '(none)' }: TopTableProps): ReactNode {
  if (rows.length === 0) return <p className="muted">Nothing in this range.</p>;
  const max = Math.max(1, ...rows.map((r) => r[count]));
  return (
    <table className="top">
      <thead>
        <tr>
          <th scope="col">{label}</th>
          <th scope="col" className="num">
            {countLabel}
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.value}>
            <td className="bar-cell">
              <span className="bar" style={{ width: `${(row[count] / max) * 100}%` }} />
              <span className="bar-label" title={row.value}>
                {row.value === '' ? emptyValue : row.value}
              </span>
            </td>
            <td className="num">{formatCount(row[count])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
