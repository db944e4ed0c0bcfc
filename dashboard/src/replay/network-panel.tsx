/** The recording's requests beside the player: failed-only filter, time-synced, a click seeks. */
import { type ReactNode, useMemo, useState } from 'react';
import type { NetworkEntry } from '../../../protocol/replay-entries.js';
import { type TimedEntry, isFailed } from './replay-entries.js';
import { TimedList } from './timed-list.js';

/** A URL's path and query, for the row (the whole URL is its title). */
function shortUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/** Bytes as B, KB or MB. */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '—';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What the status column reads: the code, the failure, or "sent" for a beacon. */
function statusText(entry: NetworkEntry): string {
  if (entry.status > 0) return String(entry.status);
  if (entry.error !== undefined) return entry.error;
  return entry.initiator === 'beacon' ? 'sent' : '—';
}

function Headers({ title, headers }: { title: string; headers: Record<string, string> | undefined }): ReactNode {
  if (headers === undefined) return null;
  const names = Object.keys(headers);
  return (
    <>
      <h3>{title}</h3>
      {names.length === 0 ? (
        <p className="muted small">none</p>
      ) : (
        <dl className="header-list">
          {names.map((name) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>{headers[name]}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}

interface NetworkPanelProps {
  entries: ReadonlyArray<TimedEntry<NetworkEntry>>;
  now: number | null;
  onSeek: (offset: number) => void;
}

/** The panel's body (the page gives it its card). */
export function NetworkPanel({ entries, now, onSeek }: NetworkPanelProps): ReactNode {
  const [failedOnly, setFailedOnly] = useState(false);
  const shown = useMemo(() => (failedOnly ? entries.filter((e) => isFailed(e.entry)) : entries), [entries, failedOnly]);
  return (
    <div className="entry-panel">
      <div className="entry-filters">
        <label>
          <input type="checkbox" checked={failedOnly} onChange={(e) => setFailedOnly(e.target.checked)} data-testid="network-failed" /> Failed only
        </label>
        <span className="muted small">
          {shown.length} of {entries.length}
        </span>
      </div>
      {entries.length === 0 ? (
        <p className="muted">No requests (network capture is off, or the page made none).</p>
      ) : (
        <TimedList
          entries={shown}
          now={now}
          onSeek={onSeek}
          label="Requests"
          testId="network-entries"
          rowClass={(e) => (isFailed(e) ? 'failed' : '')}
          row={(e) => (
            <>
              <span className="method">{e.method}</span>
              <span className="timed-text" title={e.url}>
                {shortUrl(e.url)}
              </span>
              <span className="status">{statusText(e)}</span>
              <span className="muted small nowrap">
                {e.duration} ms · {formatBytes(e.responseSize)}
              </span>
            </>
          )}
          detail={(e) =>
            e.requestHeaders === undefined && e.responseHeaders === undefined && e.requestBody === undefined && e.responseBody === undefined ? null : (
              <details className="entry-detail">
                <summary>Headers and bodies</summary>
                <Headers title="Request headers" headers={e.requestHeaders} />
                <Headers title="Response headers" headers={e.responseHeaders} />
                {e.requestBody !== undefined && (
                  <>
                    <h3>Request body</h3>
                    <pre className="stack">{e.requestBody}</pre>
                  </>
                )}
                {e.responseBody !== undefined && (
                  <>
                    <h3>Response body</h3>
                    <pre className="stack">{e.responseBody}</pre>
                  </>
                )}
              </details>
            )
          }
        />
      )}
    </div>
  );
}
