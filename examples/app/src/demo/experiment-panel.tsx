/** An A/B experiment defined inline: the assigned variant is rendered, and its use is an exposure. */
import { type ReactNode, useState } from 'react';
import { TrackClick, useAnalytics } from 'service-analytics/react';
import { CTA_EXPERIMENT, CTA_EXPERIMENT_KEY } from '../experiments.js';

/** The experiment demo. */
export function ExperimentDemo(): ReactNode {
  const analytics = useAnalytics();
  // Read once per mount: the first answer sends experiment_exposure, later ones send nothing.
  const [variant] = useState(() => analytics.getVariant(CTA_EXPERIMENT_KEY));
  const [assignments] = useState(() => analytics.getExperimentAssignments());
  const inTrial = variant === 'free-trial';
  const label = CTA_EXPERIMENT.variants.find((v) => v.key === variant)?.name ?? 'Sign up';
  return (
    <section className="card" aria-labelledby="experiment-heading">
      <h2 id="experiment-heading">A/B experiment</h2>
      <p className="hint">
        <code>enableABTesting</code> with an inline experiment; <code>getVariant('{CTA_EXPERIMENT_KEY}')</code> assigns you (stable per visitor)
        and sends <code>experiment_exposure</code> the first time.
      </p>
      <p>
        Your variant: <strong data-testid="experiment-variant">{variant ?? 'none'}</strong>
        {' · '}
        <code>isInVariant('{CTA_EXPERIMENT_KEY}', 'free-trial')</code> = {String(analytics.isInVariant(CTA_EXPERIMENT_KEY, 'free-trial'))}
      </p>
      <div className={`variant-box ${inTrial ? 'variant-trial' : 'variant-control'}`} data-variant={variant ?? 'none'}>
        <p>{inTrial ? 'Try every Pro feature for 14 days, no card needed.' : 'Create your account in a minute.'}</p>
        <TrackClick event="experiment_cta_clicked" properties={{ experiment: CTA_EXPERIMENT_KEY, variant: variant ?? 'none' }}>
          <button type="button" className={inTrial ? 'button-success' : 'button-primary'}>
            {label}
          </button>
        </TrackClick>
      </div>
      <details>
        <summary>getExperimentAssignments()</summary>
        <pre className="json">{JSON.stringify(assignments.map(({ experiment: _experiment, ...rest }) => rest), null, 2)}</pre>
      </details>
    </section>
  );
}
