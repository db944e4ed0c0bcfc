/** Recorded sessions, most recent first; a row opens its replay. */
import type { ReactNode } from 'react';
import { Panel } from '../components/panel.js';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCount, formatDateTime, formatDuration } from '../lib/format.js';
import { routeHref } from '../lib/route.js';
import { shortSessionId } from '../lib/session-id.js';
import { useResource } from '../lib/use-resource.js';
import { ScrollX } from '../components/scroll-x.js';

/** The path of a session's first URL, for the list. */
function pathOf(url: string | null): string {
  if (url === null) return '—';
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** The page. */
export function SessionsPage(): ReactNode {
  const api = useApi();
  const sessions = useResource((signal) => reports.recordedSessions(api, signal), [api]);
  return (
    <div className="page">
      <div className="toolbar">
        <h1>Sessions</h1>
        <span className="muted">Recorded sessions, newest first</span>
      </div>
      <Panel title="Recordings" resource={sessions} testId="sessions">
        {(answer) =>
          answer.sessions.length === 0 ? (
            <p className="muted">No recorded sessions yet.</p>
          ) : (
            <ScrollX label="Recorded sessions">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Session</th>
                    <th scope="col">Started</th>
                    <th scope="col">First page</th>
                    <th scope="col" className="num">
                      Length
                    </th>
                    <th scope="col" className="num">
                      Events
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {answer.sessions.map((s) => (
                    <tr key={s.session_id}>
                      <td>
                        <a href={routeHref({ page: 'replay', sessionId: s.session_id })} title={s.session_id} data-testid="session-link">
                          <code>{shortSessionId(s.session_id)}</code>
                        </a>
                        {s.user_id !== null && <span className="muted small"> {s.user_id}</span>}
                      </td>
                      <td className="nowrap">{formatDateTime(s.first_received_at)}</td>
                      <td>{pathOf(s.start_url)}</td>
                      <td className="num">{formatDuration(s.duration * 1000)}</td>
                      <td className="num">{formatCount(s.event_count)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollX>
          )
        }
      </Panel>
    </div>
  );
}
