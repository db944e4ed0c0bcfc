/**
 * Error tracking (`enableErrorTracking`: uncaught errors and unhandled rejections become `error`
 * events) and performance (`enablePerformanceTracking`: page timings sent once loaded).
 */
import { type ReactNode, useState } from 'react';
import { useAnalytics } from 'service-analytics/react';

/** Buttons that fail on purpose. */
export function ErrorsDemo(): ReactNode {
  const analytics = useAnalytics();
  const [last, setLast] = useState('');
  return (
    <section className="card" aria-labelledby="errors-heading">
      <h2 id="errors-heading">Errors</h2>
      <p className="hint">
        With <code>enableErrorTracking</code> an uncaught error or an unhandled rejection is sent as an <code>error</code> event (message,
        stack, file, line); <code>trackCustomError()</code> reports one you caught.
      </p>
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            setLast('an uncaught error (type javascript)');
            // Thrown outside React's handler, as a bug in a timer callback would be.
            setTimeout(() => {
              throw new Error('Demo: something broke in a timer');
            }, 0);
          }}
        >
          Throw an error
        </button>
        <button
          type="button"
          onClick={() => {
            setLast('an unhandled rejection (type unhandledrejection)');
            void Promise.reject(new Error('Demo: a request promise was rejected'));
          }}
        >
          Reject a promise
        </button>
        <button
          type="button"
          onClick={() => {
            try {
              JSON.parse('{not json');
            } catch (error) {
              analytics.trackCustomError(error instanceof Error ? error : String(error), { where: 'settings_import' });
              setLast('a caught error (type custom)');
            }
          }}
        >
          Report a caught error
        </button>
      </div>
      <p className="status" role="status">
        {last && <>Sent {last}.</>}
      </p>
    </section>
  );
}

/** The page's navigation timings, as `enablePerformanceTracking` reports them, and a manual send. */
export function PerformanceDemo(): ReactNode {
  const analytics = useAnalytics();
  const [sent, setSent] = useState(false);
  const nav = typeof performance === 'undefined' ? undefined : (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined);
  const paint = typeof performance === 'undefined' ? undefined : performance.getEntriesByName('first-contentful-paint')[0];
  const timings = {
    loadTime: nav ? Math.round(nav.loadEventEnd - nav.startTime) : undefined,
    domReady: nav ? Math.round(nav.domContentLoadedEventEnd - nav.startTime) : undefined,
    firstContentfulPaint: paint ? Math.round(paint.startTime) : undefined,
  };
  return (
    <section className="card" aria-labelledby="performance-heading">
      <h2 id="performance-heading">Performance</h2>
      <p className="hint">
        <code>enablePerformanceTracking</code> sent a <code>performance</code> event when this page loaded; <code>trackPerformance()</code> sends
        your own measurements (ms).
      </p>
      <dl className="stats">
        <div>
          <dt>Load</dt>
          <dd>{timings.loadTime ?? '—'} ms</dd>
        </div>
        <div>
          <dt>DOM ready</dt>
          <dd>{timings.domReady ?? '—'} ms</dd>
        </div>
        <div>
          <dt>First contentful paint</dt>
          <dd>{timings.firstContentfulPaint ?? '—'} ms</dd>
        </div>
      </dl>
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            analytics.trackPerformance(Object.fromEntries(Object.entries(timings).filter(([, v]) => v !== undefined)));
            setSent(true);
          }}
        >
          Send these timings
        </button>
      </div>
      <p className="status" role="status">
        {sent && (
          <>
            Sent <code>performance</code>.
          </>
        )}
      </p>
    </section>
  );
}
