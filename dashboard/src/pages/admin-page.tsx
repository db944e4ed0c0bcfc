/**
 * The admin page (admin accounts only; the server refuses the rest with 403): the project's
 * read-only shared links, made, copied and revoked here; the erasure of one user; the export of
 * the project's events. What an admin key does over HTTP, with the signed-in session instead.
 */
import { type FormEvent, type ReactNode, useState } from 'react';
import { type CreatedLink, createLink, eraseUser, listLinks, revokeLink } from '../api/account-api.js';
import { Panel } from '../components/panel.js';
import { useApi } from '../lib/api-context.js';
import { formatCountOf, formatDateTime, messageOf } from '../lib/format.js';
import { sharedLinkUrl } from '../lib/shared-link.js';
import { useResource } from '../lib/use-resource.js';
import '../team-access.css';

/** The shared links panel: a form to make one, the new link's address once, and the list with "Revoke". */
function SharedLinks(): ReactNode {
  const api = useApi();
  const [version, setVersion] = useState(0);
  const links = useResource((signal) => listLinks(api, signal), [api, version]);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedLink | null>(null);
  const [error, setError] = useState<string | null>(null);

  const create = (event: FormEvent): void => {
    event.preventDefault();
    setError(null);
    createLink(api, name.trim()).then(
      (made) => {
        setCreated(made);
        setName('');
        setVersion((v) => v + 1);
      },
      (e: unknown) => setError(messageOf(e)),
    );
  };
  const revoke = (id: string): void => {
    setError(null);
    revokeLink(api, id).then(
      () => {
        if (created?.link.id === id) setCreated(null);
        setVersion((v) => v + 1);
      },
      (e: unknown) => setError(messageOf(e)),
    );
  };
  const url = created === null ? null : sharedLinkUrl(window.location.origin, created.path);

  return (
    <Panel title="Share: read-only links" resource={links} testId="shared-links">
      {(rows) => (
        <div className="share">
          <p className="muted small">Anyone with a link sees this project's reports (no events list, no replays, no export), until you revoke it.</p>
          <form className="share-form" onSubmit={create}>
            <label>
              What is it for?
              <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} placeholder="e.g. the wall screen" />
            </label>
            <button type="submit">Create a link</button>
          </form>
          {url !== null && (
            <p className="new-link" role="status">
              New link (shown once): <input readOnly value={url} aria-label="New shared link" data-testid="new-link" onFocus={(e) => e.currentTarget.select()} />
            </p>
          )}
          {error !== null && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          {rows.length === 0 ? (
            <p className="muted">No links yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Link</th>
                  <th>Made</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {rows.map((l) => (
                  <tr key={l.id} data-testid="shared-link-row">
                    <td>
                      {l.name === '' ? <span className="muted">(unnamed)</span> : l.name} <code className="muted">{l.prefix}…</code>
                    </td>
                    <td className="nowrap">{formatDateTime(l.created_at)}</td>
                    <td>{l.revoked_at === null ? 'live' : 'revoked'}</td>
                    <td className="num">
                      {l.revoked_at === null && (
                        <button type="button" className="secondary" onClick={() => revoke(l.id)} aria-label={`Revoke ${l.name === '' ? l.prefix : l.name}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </Panel>
  );
}

/** Erasure of one user and the export of the project's events. */
function EraseAndExport(): ReactNode {
  const api = useApi();
  const [userId, setUserId] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const erase = (event: FormEvent): void => {
    event.preventDefault();
    setError(null);
    setResult(null);
    const id = userId.trim();
    if (!window.confirm(`Erase every event and recording of user "${id}"? This cannot be undone.`)) return;
    eraseUser(api, id).then(
      (done) => setResult(`Erased ${formatCountOf(done.events, 'event', 'events')} and ${formatCountOf(done.recordings, 'recording chunk', 'recording chunks')} of ${id}.`),
      (e: unknown) => setError(messageOf(e)),
    );
  };
  const exportAll = (): void => {
    setError(null);
    api.download('export').then(
      (blob) => {
        const a = document.createElement('a');
        a.href = URL.createObjectURL(blob);
        a.download = 'events.ndjson';
        a.click();
        URL.revokeObjectURL(a.href);
      },
      (e: unknown) => setError(messageOf(e)),
    );
  };

  return (
    <section className="panel" aria-label="Erase and export">
      <header className="panel-header">
        <h2>Erase and export</h2>
      </header>
      <form className="share-form" onSubmit={erase}>
        <label>
          User id to erase
          <input name="userId" value={userId} onChange={(e) => setUserId(e.target.value)} required maxLength={256} spellCheck={false} />
        </label>
        <button type="submit" className="danger">
          Erase user
        </button>
      </form>
      <p>
        <button type="button" className="secondary" onClick={exportAll}>
          Export all events (NDJSON)
        </button>
      </p>
      {result !== null && (
        <p role="status" data-testid="erase-result">
          {result}
        </p>
      )}
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** The page. */
export function AdminPage(): ReactNode {
  return (
    <div className="page" data-testid="admin">
      <h1>Admin</h1>
      <SharedLinks />
      <EraseAndExport />
    </div>
  );
}
