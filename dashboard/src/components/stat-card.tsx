/** One headline number with its label, and optionally a line under it (its change: `change-note.tsx`). */
import type { ReactNode } from 'react';

interface StatCardProps {
  label: string;
  value: string;
  /** Lets tests read the number. */
  testId?: string;
  /** The line under the number: its change against the previous period. */
  change?: ReactNode;
}

/** The card. */
export function StatCard({ label, value, testId, change }: StatCardProps): ReactNode {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value" data-testid={testId}>
        {value}
      </div>
      {change}
    </div>
  );
}
