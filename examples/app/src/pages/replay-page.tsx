/** Recorded sessions (`GET /api/v1/sessions`, refreshed every 3 s) and a player for the chosen one. */
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import type { ExampleConfig } from '../config.js';
import { formatDuration, formatTime, messageOf, shortId } from '../format.js';
import { type RecordedSession, createReadApi } from '../read-api.js';
import { SessionPlayer } from '../replay/session-player.js';
import { Link } from '../router.js';

const POLL_MS = 3000;

/** The Replay page. */
export function ReplayPage({ example }: { example: ExampleConfig }): ReactNode {
  const api = useMemo(() => createReadApi(example), [example]);
  const [sessions, setSessions] = useState<RecordedSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);

  useEffect(() => {
    if (api === null) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (): Promise<void> => {
      try {
        setSessions(await api.listSessions(controller.signal));
        setError(null);
      } catch (failure) {
        if (controller.signal.aborted) return;
        setError(messageOf(failure));
      }
      if (!controller.signal.aborted) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [api]);

  if (api === null) {
    return (
      <>
        <h1>Replay</h1>
        <p className="error" role="alert">
          No read key: build the app with <code>VITE_SA_READ_KEY</code>, or run it with <code>npm start</code> (demo mode).
        </p>
      </>
    );
  }
  return (
    <>
      <h1>Replay</h1>
      <p className="lead">
        Sessions recorded with <code>startRecording()</code>, newest first. Record one on the <Link to="/demo">Demo</Link> page (start, click
        around, stop), then play it here.
      </p>
      {error !== null && (
        <p className="error" role="alert">
          Could not list recordings: {error}
        </p>
      )}
      {sessions === null && error === null && <p className="muted">Loading…</p>}
      {sessions !== null && sessions.length === 0 && <p>No recordings yet.</p>}
      {sessions !== null && sessions.length > 0 && (
        <div className="table-wrap">
          <table className="sessions" data-testid="sessions-table">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Started</th>
                <th scope="col">Page</th>
                <th scope="col">Length</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.session_id} aria-selected={s.session_id === selected} data-session-id={s.session_id}>
                  <td data-label="Session" title={s.session_id}>
                    <code>{shortId(s.session_id)}</code>
                  </td>
                  <td data-label="Started">{formatTime(s.first_received_at)}</td>
                  <td data-label="Page">{pathOf(s.start_url)}</td>
                  <td data-label="Length">{formatDuration(s.duration * 1000)}</td>
                  <td data-label="Events">{s.event_count}</td>
                  <td data-label="Status">{s.finished ? 'finished' : 'recording…'}</td>
                  <td>
                    <button type="button" className={s.session_id === selected ? 'button-primary' : undefined} onClick={() => setSelected(s.session_id)}>
                      Replay<span className="visually-hidden"> session {s.session_id}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected !== null && <SessionPlayer key={selected} api={api} sessionId={selected} />}
    </>
  );
}

function pathOf(url: string | null): string {
  if (url === null) return '—';
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}
