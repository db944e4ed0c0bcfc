/**
 * The sign-in page: an account's email and password first (`password-sign-in.tsx`), and beneath
 * it, for scripts' keys and the demo, a project id and its read key. The key is checked with one
 * read before it is kept.
 * On a demo server (`start --demo`) reached over loopback, `/demo/config.json` answers with the
 * demo project's keys, and one button signs in with them; elsewhere that address is a 404 and the
 * button does not appear.
 */
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { createApiClient } from '../api/api-client.js';
import { isApiError } from '../api/api-error.js';
import type { SessionAnswer } from '../api/account-api.js';
import type { KeyCredentials } from '../api/credentials.js';
import { messageOf } from '../lib/format.js';
import { PasswordSignIn } from './password-sign-in.js';

type Credentials = KeyCredentials;

interface SignInProps {
  basePath: string;
  onSignedIn: (credentials: Credentials) => void;
  /** An account signed in; the session is in its cookie. */
  onAccount: (session: SessionAnswer) => void;
  /** Shown above the form, e.g. why the last session ended. */
  notice?: string | null;
}

/** Checks `credentials` with the smallest read there is; an Error says why they do not work. */
async function verify(basePath: string, credentials: Credentials): Promise<void> {
  try {
    await createApiClient({ credentials, basePath }).get('events', { limit: 1 });
  } catch (error) {
    if (isApiError(error) && error.status === 401) throw new Error('The project id or read key is not right (a write key cannot read).');
    throw error;
  }
}

/** The demo project's keys when this server hands them to us, else null. */
async function demoCredentials(signal: AbortSignal): Promise<Credentials | null> {
  const response = await fetch('/demo/config.json', { signal, cache: 'no-store', credentials: 'omit' });
  if (!response.ok) return null;
  const body = (await response.json()) as { projectId?: unknown; readKey?: unknown };
  return typeof body.projectId === 'string' && typeof body.readKey === 'string' ? { projectId: body.projectId, readKey: body.readKey } : null;
}

/** The form. */
export function SignIn({ basePath, onSignedIn, onAccount, notice = null }: SignInProps): ReactNode {
  const [projectId, setProjectId] = useState('');
  const [readKey, setReadKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [demo, setDemo] = useState<Credentials | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    demoCredentials(controller.signal).then(setDemo, () => setDemo(null));
    return () => controller.abort();
  }, []);

  const signIn = async (credentials: Credentials): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await verify(basePath, credentials);
      onSignedIn(credentials);
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    void signIn({ projectId: projectId.trim(), readKey: readKey.trim() });
  };

  return (
    <main className="sign-in sign-in-stack">
      <PasswordSignIn basePath={basePath} notice={notice} onSignedIn={onAccount} />
      <form onSubmit={submit} className="panel key-sign-in" aria-label="Sign in">
        <h2>Or open one project with its read key</h2>
        <p className="muted small">For scripts and a quick look: the project's id and read key (<code>npx service-analytics-server key create --project ID --kind read</code>, also in a clone of the repository). They stay in this tab only.</p>
        <label>
          Project id
          <input name="projectId" value={projectId} onChange={(e) => setProjectId(e.target.value)} autoComplete="username" required spellCheck={false} />
        </label>
        <label>
          Read key
          <input name="readKey" type="password" value={readKey} onChange={(e) => setReadKey(e.target.value)} autoComplete="current-password" required spellCheck={false} />
        </label>
        {error !== null && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="secondary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {demo !== null && (
          <button type="button" className="secondary" disabled={busy} onClick={() => void signIn(demo)}>
            Open the demo project
          </button>
        )}
      </form>
    </main>
  );
}
