/**
 * The project and read key the dashboard signs in with, kept in `sessionStorage` (gone when the
 * tab closes, never in the URL, never in `localStorage`).
 */

/** What every API call is authenticated with. */
export interface Credentials {
  projectId: string;
  readKey: string;
}

/** The storage the credentials live in; `window.sessionStorage` in the app. */
export type CredentialStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

const KEY = 'service-analytics.dashboard.credentials';

function isCredentials(value: unknown): value is Credentials {
  const v = value as Partial<Credentials> | null;
  return typeof v === 'object' && v !== null && typeof v.projectId === 'string' && v.projectId !== '' && typeof v.readKey === 'string' && v.readKey !== '';
}

/** The stored credentials, or null (none, unreadable, or storage refused). */
export function loadCredentials(storage: CredentialStorage): Credentials | null {
  try {
    const raw = storage.getItem(KEY);
    if (raw === null) return null;
    const parsed: unknown = JSON.parse(raw);
    return isCredentials(parsed) ? { projectId: parsed.projectId, readKey: parsed.readKey } : null;
  } catch {
    return null;
  }
}

/** Keeps `credentials` for this tab; false when the storage refused them. */
export function saveCredentials(storage: CredentialStorage, credentials: Credentials): boolean {
  try {
    storage.setItem(KEY, JSON.stringify({ projectId: credentials.projectId, readKey: credentials.readKey }));
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
