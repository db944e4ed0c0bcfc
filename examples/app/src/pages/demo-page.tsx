/** The demo: one card per feature of the client and its React bindings. */
import type { ReactNode } from 'react';
import { BillingDemo } from '../demo/billing-panel.js';
import { ClickTrackingDemo, ViewTrackingDemo } from '../demo/click-tracking.js';
import { ErrorsDemo, PerformanceDemo } from '../demo/errors-panel.js';
import { ExperimentDemo } from '../demo/experiment-panel.js';
import { FunnelDemo } from '../demo/funnel-panel.js';
import { RecordingDemo } from '../demo/recording-panel.js';
import { SessionPanel } from '../demo/session-panel.js';
import { SignupFormDemo } from '../demo/signup-form.js';
import { ErrorBoundary } from '../error-boundary.js';
import { Link } from '../router.js';

/** Every feature, each in a card. */
export function DemoPage(): ReactNode {
  return (
    <>
      <h1>Demo</h1>
      <p className="lead">
        Each card calls the client and says what it sent. Keep the <Link to="/events">Events</Link> page open in another tab to watch them
        arrive.
      </p>
      <div className="grid">
        <ErrorBoundary name="The recording demo">
          <RecordingDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The session panel">
          <SessionPanel />
        </ErrorBoundary>
        <ErrorBoundary name="The click demo">
          <ClickTrackingDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The signup form">
          <SignupFormDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The funnel demo">
          <FunnelDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The billing demo">
          <BillingDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The experiment demo">
          <ExperimentDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The errors demo">
          <ErrorsDemo />
        </ErrorBoundary>
        <ErrorBoundary name="The performance demo">
          <PerformanceDemo />
        </ErrorBoundary>
      </div>
      <ErrorBoundary name="The view-tracking demo">
        <ViewTrackingDemo />
      </ErrorBoundary>
    </>
  );
}
