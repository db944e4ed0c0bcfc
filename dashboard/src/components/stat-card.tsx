/** One headline number with its label. */
import type { ReactNode } from 'react';

/** The card; `testId` lets tests read the number. */
export function StatCard({ label, value, testId }: { label: string; value: string; testId?: string }): ReactNode {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value" data-testid={testId}>
        {value}
      </div>
    </div>
  );
}
