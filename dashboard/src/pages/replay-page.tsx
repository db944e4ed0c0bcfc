/** One session: its replay, and its events beside the player (a click seeks to that moment). */
import { type ReactNode, useCallback, useRef } from 'react';
import { EventTable } from '../components/event-table.js';
import { Panel } from '../components/panel.js';
import { isApiError } from '../api/api-error.js';
import * as reports from '../api/reports.js';
import type { WireEvent } from '../api/wire-types.js';
import { useApi } from '../lib/api-context.js';
import { routeHref } from '../lib/route.js';
import { shortSessionId } from '../lib/session-id.js';
import { useResource } from '../lib/use-resource.js';
import { type PlayerHandle, ReplayPlayer } from '../replay/replay-player.js';

/** The page. */
export function ReplayPage({ sessionId }: { sessionId: string }): ReactNode {
  const api = useApi();
  // A 404 here is a session without a recording, not an older server: say what the server said.
  const recording = useResource(
    (signal) =>
      reports.recording(api, sessionId, signal).catch((error: unknown) => {
        throw isApiError(error) ? new Error(error.message) : error;
      }),
    [api, sessionId],
  );
  const events = useResource(async (signal) => (await reports.events(api, { sessionId, limit: 500 }, signal)).events.slice().reverse(), [api, sessionId]);
  const handle = useRef<PlayerHandle | null>(null);
  const onReady = useCallback((h: PlayerHandle | null) => {
    handle.current = h;
  }, []);
  const start = recording.state === 'ready' ? (recording.value.events[0]?.timestamp ?? null) : null;
  const pick = (event: WireEvent): void => {
    if (start === null || event.timestamp === null) return;
    handle.current?.seek(Date.parse(event.timestamp) - start);
  };

  return (
    <div className="page">
      <div className="toolbar">
        <h1>
          Session <code title={sessionId}>{shortSessionId(sessionId)}</code>
        </h1>
        <a href={routeHref({ page: 'sessions' })}>All sessions</a>
      </div>
      <div className="replay-layout">
        <Panel title="Replay" resource={recording} testId="replay">
          {(r) => <ReplayPlayer recording={r} onReady={onReady} />}
        </Panel>
        <Panel title="Events of this session" resource={events} testId="replay-events" className="replay-side">
          {(list) => <EventTable events={list} withSession={false} onPick={pick} />}
        </Panel>
      </div>
    </div>
  );
}
