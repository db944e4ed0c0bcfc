/**
 * The line under a headline number that says how it moved against the previous period: an arrow
 * and the size as text (`▲ 12%`), coloured as good or bad news for that number, and a sentence for
 * screen readers (`up 12% from the previous 30 days`) in place of the arrow.
 */
import type { ReactNode } from 'react';
import { type GoodDirection, type PeriodChange, changeLabel, changeText, changeTone } from '../lib/period-change.js';

interface ChangeNoteProps {
  /** Null while the previous period loads (or could not be read): the line keeps its height. */
  change: PeriodChange | null;
  /** Which way is good news for this number. */
  good: GoodDirection;
  /** The previous period as the sentence names it: `the previous 30 days`. */
  period: string;
  testId?: string;
}

/** The note. */
export function ChangeNote({ change, good, period, testId }: ChangeNoteProps): ReactNode {
  if (change === null) {
    // Reserves the line, so the cards do not grow when the comparison arrives after the numbers.
    return <div className="stat-change" aria-hidden="true" data-testid={testId} data-state="loading" />;
  }
  const label = changeLabel(change, period);
  return (
    <div className={`stat-change ${changeTone(change, good)}`} title={label} data-testid={testId} data-state="ready">
      <span aria-hidden="true">{changeText(change)}</span>
      <span className="visually-hidden">{label}</span>
    </div>
  );
}
