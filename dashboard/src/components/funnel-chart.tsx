/** A funnel's answer as bars: sessions per step, conversion from the first, drop-off from the previous. */
import type { ReactNode } from 'react';
import type { FunnelStepResult } from '../api/wire-types.js';
import { formatCount, formatCountOf, formatPercent } from '../lib/format.js';
import { parseStep, stepLabel } from '../lib/funnel-steps.js';

/** The chart. */
export function FunnelChart({ steps }: { steps: readonly FunnelStepResult[] }): ReactNode {
  const first = Math.max(1, steps[0]?.sessions ?? 0);
  return (
    <ol className="funnel">
      {steps.map((s, i) => {
        const parsed = parseStep(s.step);
        return (
          <li key={`${i}-${s.step}`} data-testid="funnel-step">
            <div className="funnel-head">
              <span>
                {i + 1}. {parsed === null ? s.step : stepLabel(parsed)}
              </span>
              <span className="num" data-testid="funnel-sessions">
                {formatCountOf(s.sessions, 'session', 'sessions')} · {formatPercent(s.conversion_rate)}
              </span>
            </div>
            <div className="funnel-track">
              <span className="funnel-bar" style={{ width: `${(s.sessions / first) * 100}%` }} />
            </div>
            {i > 0 && (
              <div className="muted small">
                Drop-off {formatCount(s.drop_off)} ({formatPercent(s.drop_off_rate)})
              </div>
            )}
          </li>
        );
      })}
    </ol>
  );
}
