/**
 * One session: its replay, and beside the player its events, its console and its requests (tabs;
 * each kept in step with the player's clock, and a click seeks to that moment).
 */
import { type ReactNode, useCallback, useMemo, useRef, useState } from 'react';
import { EventTable } from '../components/event-table.js';
import { Panel } from '../components/panel.js';
import { isApiError } from '../api/api-error.js';
import * as reports from '../api/reports.js';
import type { WireEvent } from '../api/wire-types.js';
import { useApi } from '../lib/api-context.js';
import { routeHref } from '../lib/route.js';
import { shortSessionId } from '../lib/session-id.js';
import { useResource } from '../lib/use-resource.js';
import { ConsolePanel } from '../replay/console-panel.js';
import { NetworkPanel } from '../replay/network-panel.js';
import { replayEntries } from '../replay/replay-entries.js';
import { type PlayerHandle, ReplayPlayer } from '../replay/replay-player.js';

type SideTab = 'events' | 'console' | 'network';

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
  const [now, setNow] = useState<number | null>(null);
  const [tab, setTab] = useState<SideTab>('events');
  const entries = useMemo(() => replayEntries(recording.state === 'ready' ? recording.value.events : []), [recording]);
  const start = recording.state === 'ready' ? (recording.value.events[0]?.timestamp ?? null) : null;
  const pick = (event: WireEvent): void => {
    if (start === null || event.timestamp === null) return;
    handle.current?.seek(Date.parse(event.timestamp) - start);
  };
  const seek = useCallback((offset: number) => handle.current?.seek(offset), []);
  const tabs: ReadonlyArray<{ id: SideTab; label: string }> = [
    { id: 'events', label: 'Events' },
    { id: 'console', label: `Console (${entries.console.length})` },
    { id: 'network', label: `Network (${entries.network.length})` },
  ];

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
          {(r) => (
            <ReplayPlayer
              recording={r}
              onReady={onReady}
              onTime={setNow}
              events={events.state === 'ready' ? events.value : undefined}
            />
          )}
        </Panel>
        <div className="replay-side-column">
          <div className="tabs" role="tablist" aria-label="Beside the replay">
            {tabs.map((t) => (
              <button
                key={t.id}
                type="button"
                role="tab"
                id={`tab-${t.id}`}
                aria-selected={tab === t.id}
                aria-controls={`tabpanel-${t.id}`}
                className={tab === t.id ? 'tab active' : 'tab'}
                onClick={() => setTab(t.id)}
                data-testid={`tab-${t.id}`}
              >
                {t.label}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`tabpanel-${tab}`} aria-labelledby={`tab-${tab}`}>
            {tab === 'events' && (
              <Panel title="Events of this session" resource={events} testId="replay-events" className="replay-side">
                {(list) => <EventTable events={list} withSession={false} onPick={pick} />}
              </Panel>
            )}
            {tab === 'console' && (
              <Panel title="Console" resource={recording} testId="replay-console" className="replay-side">
                {() => <ConsolePanel entries={entries.console} now={now} onSeek={seek} />}
              </Panel>
            )}
            {tab === 'network' && (
              <Panel title="Network" resource={recording} testId="replay-network" className="replay-side">
                {() => <NetworkPanel entries={entries.network} now={now} onSeek={seek} />}
              </Panel>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}
