/** The live session from `useSessionTracking()`, plus the queue and a "send now" button. */
import { type ReactNode, useState } from 'react';
import { useAnalytics, useSessionTracking } from 'service-analytics/react';
import { formatDuration, shortId } from '../format.js';

/** A live view of the session; re-renders on clicks, scrolls, navigation and once a second. */
export function SessionPanel(): ReactNode {
  const analytics = useAnalytics();
  const session = useSessionTracking();
  const [status, setStatus] = useState('');
  const flush = (): void => {
    setStatus('Sending…');
    analytics.flush().then(
      () => setStatus('Everything queued was accepted by the server.'),
      (error: unknown) => setStatus(`Not sent yet (${error instanceof Error ? error.message : String(error)}); the events stay queued.`),
    );
  };
  return (
    <section className="card" aria-labelledby="session-heading">
      <h2 id="session-heading">Your session</h2>
      <p className="hint">
        <code>useSessionTracking()</code>
      </p>
      <dl className="stats" data-testid="session-panel">
        <div>
          <dt>Session</dt>
          <dd title={session.sessionId}>
            <code data-testid="session-id" data-session-id={session.sessionId}>
              {shortId(session.sessionId)}
            </code>
          </dd>
        </div>
        <div>
          <dt>Active</dt>
          <dd>{session.isActive ? 'yes' : 'no'}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatDuration(session.duration)}</dd>
        </div>
        <div>
          <dt>Page views</dt>
          <dd data-testid="session-page-views">{session.pageViews}</dd>
        </div>
        <div>
          <dt>Clicks</dt>
          <dd data-testid="session-clicks">{session.clicks}</dd>
        </div>
        <div>
          <dt>Scroll depth</dt>
          <dd>{Math.round(session.scrollDepth)}%</dd>
        </div>
      </dl>
      <div className="actions">
        <button type="button" onClick={flush}>
          Send queued events now
        </button>
        <span className="muted">{analytics.getQueueSize()} queued</span>
      </div>
      <p className="status" role="status">
        {status}
      </p>
    </section>
  );
}
