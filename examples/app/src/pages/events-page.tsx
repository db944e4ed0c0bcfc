/**
 * What the server received, live: polls `GET /api/v1/events` every 1.5 s with the read key,
 * newest first, filterable by event type, user and session. New rows are highlighted.
 */
import { type FormEvent, type ReactNode, useEffect, useMemo, useState } from 'react';
import { useAnalytics } from 'service-analytics/react';
import type { ExampleConfig } from '../config.js';
import { formatTime, messageOf, shortId } from '../format.js';
import { type EventFilters, type ReceivedEvent, createReadApi } from '../read-api.js';

const POLL_MS = 1500;
const PAGE_SIZE = 100;
const NO_FILTERS: EventFilters = { eventType: '', userId: '', sessionId: '' };
const KNOWN_TYPES = ['page_view', 'user_identify', 'button_clicked', 'feature_used', 'form_field_change', 'form_submit', 'section_viewed',
  'funnel_started', 'funnel_step', 'funnel_completed', 'funnel_abandoned', 'subscription_started', 'subscription_upgraded',
  'subscription_canceled', 'payment_succeeded', 'payment_failed', 'experiment_exposure', 'error', 'performance'];

interface Feed {
  events: ReceivedEvent[];
  /** Ids that were not in the previous poll's answer. */
  fresh: ReadonlySet<string>;
  updatedAt: Date;
}

/** The live event list. */
export function EventsPage({ example }: { example: ExampleConfig }): ReactNode {
  const analytics = useAnalytics();
  const api = useMemo(() => createReadApi(example), [example]);
  const [filters, setFilters] = useState<EventFilters>(NO_FILTERS);
  const [draft, setDraft] = useState<EventFilters>(NO_FILTERS);
  const [live, setLive] = useState(true);
  const [feed, setFeed] = useState<Feed | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (api === null) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let previous: Set<string> | null = null;
    const poll = async (): Promise<void> => {
      try {
        const events = await api.listEvents(filters, PAGE_SIZE, controller.signal);
        const before = previous;
        previous = new Set(events.map((e) => e.event_id));
        setFeed({ events, fresh: new Set(before === null ? [] : events.filter((e) => !before.has(e.event_id)).map((e) => e.event_id)), updatedAt: new Date() });
        setError(null);
      } catch (failure) {
        if (controller.signal.aborted) return;
        setError(messageOf(failure));
      }
      if (live && !controller.signal.aborted) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [api, filters, live]);

  const apply = (next: EventFilters): void => {
    setDraft(next);
    setFilters(next);
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    setFilters(draft);
  };
  const types = useMemo(() => [...new Set([...KNOWN_TYPES, ...(feed?.events.map((e) => e.event_type) ?? [])])].sort(), [feed]);

  if (api === null) {
    return (
      <>
        <h1>Events</h1>
        <p className="error" role="alert">
          No read key: build the app with <code>VITE_SA_READ_KEY</code>, or run it with <code>npm start</code> (demo mode).
        </p>
      </>
    );
  }
  const filtered = filters.eventType !== '' || filters.userId !== '' || filters.sessionId !== '';
  return (
    <>
      <h1>Events</h1>
      <p className="lead">
        What the server stored for this project, newest first, read back with <code>GET /api/v1/events</code> and the read key
        {live ? `, refreshed every ${POLL_MS / 1000} s` : ' (paused)'}.
      </p>
      <form className="filters" onSubmit={onSubmit} aria-label="Filter events">
        <label>
          Event type
          <input name="event_type" list="event-types" value={draft.eventType} onChange={(e) => setDraft({ ...draft, eventType: e.target.value })} placeholder="any" />
        </label>
        <datalist id="event-types">
          {types.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <label>
          User id
          <input name="user_id" value={draft.userId} onChange={(e) => setDraft({ ...draft, userId: e.target.value })} placeholder="any" />
        </label>
        <label>
          Session id
          <input name="session_id" value={draft.sessionId} onChange={(e) => setDraft({ ...draft, sessionId: e.target.value })} placeholder="any" />
        </label>
        <div className="actions">
          <button type="submit" className="button-primary">
            Apply
          </button>
          <button type="button" onClick={() => apply({ ...filters, sessionId: analytics.getSessionId() })}>
            This session
          </button>
          <button type="button" disabled={!filtered && draft === filters} onClick={() => apply(NO_FILTERS)}>
            Clear
          </button>
          <button type="button" aria-pressed={!live} onClick={() => setLive(!live)}>
            {live ? 'Pause' : 'Resume'}
          </button>
        </div>
      </form>
      <p className="muted" role="status" aria-live="polite">
        {error !== null ? (
          <span className="error">Could not read events: {error}</span>
        ) : feed === null ? (
          'Loading…'
        ) : (
          `${feed.events.length === PAGE_SIZE ? `The ${PAGE_SIZE} newest` : feed.events.length} event${feed.events.length === 1 ? '' : 's'}${filtered ? ' matching the filters' : ''} · updated ${feed.updatedAt.toLocaleTimeString(undefined, { hour12: false })}`
        )}
      </p>
      {feed !== null && feed.events.length === 0 && <p>No events yet. Click around on the Demo page; they show up here within a couple of seconds.</p>}
      {feed !== null && feed.events.length > 0 && (
        <div className="table-wrap">
          <table className="events" data-testid="events-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Type</th>
                <th scope="col">User</th>
                <th scope="col">Session</th>
                <th scope="col">Properties</th>
              </tr>
            </thead>
            <tbody>
              {feed.events.map((e) => (
                <tr key={e.event_id} className={feed.fresh.has(e.event_id) ? 'fresh' : undefined} data-event-type={e.event_type}>
                  <td data-label="Time">
                    <time dateTime={e.timestamp}>{formatTime(e.timestamp)}</time>
                  </td>
                  <td data-label="Type">
                    <button type="button" className="link" title="Show only this type" onClick={() => apply({ ...filters, eventType: e.event_type })}>
                      {e.event_type}
                    </button>
                  </td>
                  <td data-label="User">
                    {e.user_id === null ? (
                      '—'
                    ) : (
                      <button type="button" className="link" title={`Show only user ${e.user_id}`} onClick={() => apply({ ...filters, userId: e.user_id ?? '' })}>
                        {e.user_id}
                      </button>
                    )}
                  </td>
                  <td data-label="Session">
                    {e.session_id === null ? (
                      '—'
                    ) : (
                      <button type="button" className="link mono" title={`Show only session ${e.session_id}`} onClick={() => apply({ ...filters, sessionId: e.session_id ?? '' })}>
                        {shortId(e.session_id)}
                      </button>
                    )}
                  </td>
                  <td data-label="Properties" className="props">
                    <PropertyList properties={e.properties} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** Properties that every event carries and that would crowd the table. */
const QUIET = new Set(['anonymous_id', 'screen', 'user_agent', 'locale', 'timezone', 'library', 'referrer']);

/** `key value` pairs; a JSON-encoded object (page, subscription) is shown by its useful members. */
function PropertyList({ properties }: { properties: ReceivedEvent['properties'] }): ReactNode {
  const entries = Object.entries(properties).filter(([key]) => !QUIET.has(key));
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="prop-list">
      {entries.map(([key, value]) => (
        <li key={key}>
          <span className="prop-key">{key}</span> <span className="prop-value">{preview(key, value)}</span>
        </li>
      ))}
    </ul>
  );
}

function preview(key: string, value: string | number | boolean | null): string {
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      const object = JSON.parse(value) as Record<string, unknown>;
      if (key === 'page' && typeof object.path === 'string') return String(object.path);
      return truncate(JSON.stringify(object));
    } catch {
      // Not JSON after all: show it as it is.
    }
  }
  return truncate(String(value));
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
