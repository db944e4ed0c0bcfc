/** Home: what the example shows, and where to look. */
import type { ReactNode } from 'react';
import { TrackClick } from 'service-analytics/react';
import { SessionPanel } from '../demo/session-panel.js';
import { Link } from '../router.js';

/** The landing page. */
export function HomePage(): ReactNode {
  return (
    <>
      <h1>See your own analytics arrive</h1>
      <p className="lead">
        This app uses <code>service-analytics</code> the way yours would: the client from <code>'service-analytics'</code>, the React bindings
        from <code>'service-analytics/react'</code>, sending to the server that serves this page. Everything it sends is stored in SQLite and
        shown on the Events page a second or two later.
      </p>
      <ol className="steps">
        <li>
          Open the <Link to="/demo">Demo</Link> and click around: tracked buttons, a signup form, a funnel, billing events, an experiment, errors,
          and a session recording.
        </li>
        <li>
          Watch the <Link to="/events">Events</Link> page: it polls the read API and lists what the server received, live.
        </li>
        <li>
          Start and stop a recording on the Demo page, then play it back on the <Link to="/replay">Replay</Link> page.
        </li>
      </ol>
      <p>
        <TrackClick event="cta_clicked" properties={{ location: 'home', cta: 'open_demo' }}>
          <Link to="/demo" className="button button-primary">
            Open the demo
          </Link>
        </TrackClick>
      </p>
      <SessionPanel />
    </>
  );
}
