/** A checkout funnel: start, advance through its steps, complete or abandon; shows `getFunnelState`. */
import { type ReactNode, useReducer } from 'react';
import { useAnalytics } from 'service-analytics/react';

const FUNNEL = 'checkout';
const STEPS = ['cart', 'shipping', 'payment'] as const;

/** The funnel demo. */
export function FunnelDemo(): ReactNode {
  const analytics = useAnalytics();
  const [, refresh] = useReducer((n: number) => n + 1, 0);
  const state = analytics.getFunnelState(FUNNEL);
  const running = state?.status === 'started';
  const reached = state?.steps.length ?? 0;
  const next = running ? STEPS[reached] : undefined;
  const act = (run: () => void) => () => {
    run();
    refresh();
  };
  return (
    <section className="card" aria-labelledby="funnel-heading">
      <h2 id="funnel-heading">Funnel</h2>
      <p className="hint">
        <code>startFunnel</code> → <code>advanceFunnel</code> → <code>completeFunnel</code> or <code>abandonFunnel</code> send{' '}
        <code>funnel_started</code>, <code>funnel_step</code>, <code>funnel_completed</code>, <code>funnel_abandoned</code>.
      </p>
      <ol className="funnel-steps" aria-label="Checkout steps">
        {STEPS.map((step, i) => (
          <li key={step} className={i < reached ? 'done' : i === reached && running ? 'current' : ''}>
            {step}
          </li>
        ))}
      </ol>
      <div className="actions">
        <button type="button" onClick={act(() => analytics.startFunnel(FUNNEL, { source: 'demo' }))}>
          {state === undefined ? 'Start checkout' : 'Restart checkout'}
        </button>
        <button type="button" disabled={next === undefined} onClick={act(() => next !== undefined && analytics.advanceFunnel(FUNNEL, next))}>
          Next step{next === undefined ? '' : `: ${next}`}
        </button>
        <button type="button" disabled={!running} onClick={act(() => analytics.completeFunnel(FUNNEL, { total_cents: 4900 }))}>
          Complete
        </button>
        <button type="button" disabled={!running} onClick={act(() => analytics.abandonFunnel(FUNNEL, 'changed_mind'))}>
          Abandon
        </button>
      </div>
      <p className="hint">
        <code>getFunnelState('{FUNNEL}')</code>
      </p>
      <pre className="json" data-testid="funnel-state">
        {state === undefined ? 'undefined' : JSON.stringify(state, null, 2)}
      </pre>
    </section>
  );
}
