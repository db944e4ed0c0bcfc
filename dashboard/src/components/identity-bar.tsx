/**
 * The right end of the top bar: who looks at the dashboard and how to stop. An account shows its
 * email and role, the project picker, a "Share" shortcut for admins and "Sign out" (which ends the
 * session on the server); a read key its project and "Sign out"; a shared link says it is a
 * read-only view and offers to leave it.
 */
import type { ReactNode } from 'react';
import type { WireAccount, WireProject } from '../api/account-api.js';
import { routeHref } from '../lib/route.js';
import '../team-access.css';

/** Who is signed in, as the identity bar shows it. */
export type Identity =
  | { kind: 'account'; account: WireAccount; projects: readonly WireProject[]; projectId: string; onProject: (projectId: string) => void }
  | { kind: 'key'; projectId: string }
  | { kind: 'link' };

/** The bar's end. */
export function IdentityBar({ identity, onSignOut }: { identity: Identity; onSignOut: () => void }): ReactNode {
  if (identity.kind === 'link') {
    return (
      <span className="identity">
        <span className="role-badge" data-testid="shared-view">
          Shared view · read-only
        </span>
        <button type="button" className="link" onClick={onSignOut}>
          Leave
        </button>
      </span>
    );
  }
  if (identity.kind === 'key') {
    return (
      <span className="identity">
        <span className="project muted" title="Project">
          {identity.projectId}
        </span>
        <button type="button" className="link" onClick={onSignOut}>
          Sign out
        </button>
      </span>
    );
  }
  const { account, projects, projectId, onProject } = identity;
  return (
    <span className="identity">
      {projects.length > 1 && (
        <label className="project-picker">
          <span className="visually-hidden">Project</span>
          <select value={projectId} onChange={(e) => onProject(e.target.value)}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {account.role === 'admin' && (
        <a className="share-button" href={routeHref({ page: 'admin' })}>
          Share
        </a>
      )}
      <span className="who" data-testid="signed-in-as" title={account.email}>
        <span className="who-email">{account.email}</span> <span className="role-badge">{account.role}</span>
      </span>
      <button type="button" className="link" onClick={onSignOut}>
        Sign out
      </button>
    </span>
  );
}
