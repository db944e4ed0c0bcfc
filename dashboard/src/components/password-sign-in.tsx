/**
 * Sign-in with an email and a password (an account made with `user create`). The server answers
 * with the session cookie, which no script can read; wrong credentials and too many attempts come
 * back as the server's message.
 */
import { type FormEvent, type ReactNode, useState } from 'react';
import { type SessionAnswer, signIn } from '../api/account-api.js';
import { messageOf } from '../lib/format.js';
import '../team-access.css';

/** The form; `notice` is shown above it (e.g. why the last session ended). */
export function PasswordSignIn({ basePath, notice, onSignedIn }: { basePath: string; notice: string | null; onSignedIn: (session: SessionAnswer) => void }): ReactNode {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    signIn(basePath, email.trim(), password).then(
      (session) => onSignedIn(session),
      (e: unknown) => {
        setError(messageOf(e));
        setBusy(false);
      },
    );
  };

  return (
    <form onSubmit={submit} className="panel" aria-label="Sign in with your account">
      <h1>service-analytics</h1>
      <p className="muted">Sign in with the account your administrator made for you.</p>
      {notice !== null && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <label>
        Email
        <input name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required spellCheck={false} />
      </label>
      <label>
        Password
        <input name="password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required />
      </label>
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {/* "Log in", not "Sign in": the read-key form below keeps that name, which scripts and tests know it by. */}
      <button type="submit" disabled={busy}>
        {busy ? 'Checking…' : 'Log in'}
      </button>
    </form>
  );
}
