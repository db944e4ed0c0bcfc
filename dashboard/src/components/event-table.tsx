/** A list of events; each one's session links to its replay. */
import type { ReactNode } from 'react';
import type { WireEvent } from '../api/wire-types.js';
import { formatTime } from '../lib/format.js';
import { routeHref } from '../lib/route.js';
import { shortSessionId } from '../lib/session-id.js';
import { ScrollX } from './scroll-x.js';

/** What an event is about in a few words: its page, name or message. */
export function eventSummary(event: WireEvent): string {
  const p = event.properties;
  for (const key of ['path', 'message', 'name', 'feature', 'element', 'step', 'experiment']) {
    const value = p[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  const page = p.page;
  if (typeof page === 'string') {
    try {
      const parsed = JSON.parse(page) as { path?: unknown };
      if (typeof parsed.path === 'string') return parsed.path;
    } catch {
      return page;
    }
  }
  return '';
}

interface EventTableProps {
  events: readonly WireEvent[];
  /** Hide the session column (the replay page lists one session's events). */
  withSession?: boolean;
  /** Called with an event when its row is chosen (the replay page seeks to it). */
  onPick?: (event: WireEvent) => void;
}

/** The table, or a line saying there are none. */
export function EventTable({ events, withSession = true, onPick }: EventTableProps): ReactNode {
  if (events.length === 0) return <p className="muted">No events.</p>;
  return (
    <ScrollX label="Events">
      <table className="events">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Detail</th>
            {withSession && <th scope="col">Session</th>}
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.event_id} className={onPick ? 'pickable' : undefined} onClick={onPick ? () => onPick(e) : undefined}>
              <td className="nowrap">{formatTime(e.timestamp)}</td>
              <td>
                <code>{e.event_type}</code>
              </td>
              <td className="detail" title={eventSummary(e)}>
                {eventSummary(e)}
              </td>
              {withSession && (
                <td>
                  {e.session_id === null ? (
                    '—'
                  ) : (
                    <a href={routeHref({ page: 'replay', sessionId: e.session_id })} title={e.session_id}>
                      <code>{shortSessionId(e.session_id)}</code>
                    </a>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollX>
  );
}
