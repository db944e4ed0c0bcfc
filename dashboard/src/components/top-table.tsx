/** A top-N list: value, a bar of its share, and its count; with `onPick`, a value is a button that filters by it. */
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
  /** How a value reads (a country code by its name). @default the value as it is */
  format?: (value: string) => ReactNode;
  /** Called with a row's value when it is chosen; an empty value cannot be a filter (the endpoints refuse it). */
  onPick?: (value: string) => void;
  /** The value the view is filtered to, marked in the list. */
  active?: string;
}

/** The table, or a line saying there is nothing in this range. */
export function TopTable({ rows, label, countLabel = 'Visitors', count = 'visitors', emptyValue = '(none)', format, onPick, active }: TopTableProps): ReactNode {
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
        {rows.map((row) => {
          const text = row.value === '' ? emptyValue : format === undefined ? row.value : format(row.value);
          const pickable = onPick !== undefined && row.value !== '' && row.value !== active;
          return (
            // The whole row takes a click; the button in it is what the keyboard and screen readers
            // reach, and its click bubbles up to the row.
            <tr key={row.value} className={row.value === active ? 'active' : pickable ? 'pickable' : undefined} onClick={pickable ? () => onPick(row.value) : undefined}>
              <td className="bar-cell">
                <span className="bar" style={{ width: `${(row[count] / max) * 100}%` }} />
                {pickable ? (
                  <button type="button" className="bar-label row-filter" title={`Filter by ${label.toLowerCase()} ${row.value}`}>
                    {text}
                  </button>
                ) : (
                  <span className="bar-label" title={row.value}>
                    {text}
                  </span>
                )}
              </td>
              <td className="num">{formatCount(row[count])}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
