/**
 * How the dashboard is signed in, kept in `sessionStorage` (gone when the tab closes, never in the
 * URL, never in `localStorage`): a project id and its read key; a signed-in account (its session is
 * an `HttpOnly` cookie no script reads, so only the chosen project is kept here); or a read-only
 * shared link's token.
 */

/** A project id and its read key, as scripts use them. */
export interface KeyCredentials {
  kind?: 'key';
  projectId: string;
  readKey: string;
}

/** A signed-in account (the cookie authenticates) and the project it looks at. */
export interface AccountCredentials {
  kind: 'account';
  projectId: string;
}

/** A read-only shared link: its project's reports only. */
export interface LinkCredentials {
  kind: 'link';
  token: string;
}

/** What every API call is authenticated with. */
export type Credentials = KeyCredentials | AccountCredentials | LinkCredentials;

/** The storage the credentials live in; `window.sessionStorage` in the app. */
export type CredentialStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

const KEY = 'service-analytics.dashboard.credentials';

const text = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The credentials in `value`, or null when it holds none of the three shapes. */
function credentialsOf(value: unknown): Credentials | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (v.kind === 'account') return text(v.projectId) ? { kind: 'account', projectId: v.projectId } : null;
  if (v.kind === 'link') return text(v.token) ? { kind: 'link', token: v.token } : null;
  if (v.kind !== undefined && v.kind !== 'key') return null;
  return text(v.projectId) && text(v.readKey) ? { projectId: v.projectId, readKey: v.readKey } : null;
}

/** The stored credentials, or null (none, unreadable, or storage refused). */
export function loadCredentials(storage: CredentialStorage): Credentials | null {
  try {
    const raw = storage.getItem(KEY);
    if (raw === null) return null;
    return credentialsOf(JSON.parse(raw) as unknown);
  } catch {
    return null;
  }
}

/** Keeps `credentials` for this tab; false when the storage refused them. */
export function saveCredentials(storage: CredentialStorage, credentials: Credentials): boolean {
  try {
    storage.setItem(KEY, JSON.stringify(credentialsOf(credentials)));
    return true;
  } catch {
    return false;
  }
}

/** Forgets the credentials (sign out). */
export function clearCredentials(storage: CredentialStorage): void {
  try {
    storage.removeItem(KEY);
  } catch {
    // Storage that refuses a removal holds nothing of ours.
  }
}
