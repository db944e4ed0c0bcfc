/**
 * Who the dashboard is signed in as, and the moves between: a shared link's address opened (its
 * token taken out of the address and kept for the tab), a read key, an account's session (asked of
 * the server at start: the cookie is `HttpOnly`, so only the server can tell), a project chosen,
 * and signing out (for an account, on the server too). A 401 from any request ends it, with a note
 * on the sign-in page.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { type SessionAnswer, currentSession, signOut as endSession } from '../api/account-api.js';
import { type CredentialStorage, type Credentials, type KeyCredentials, clearCredentials, loadCredentials, saveCredentials } from '../api/credentials.js';
import { messageOf } from './format.js';
import { sharedTokenOf } from './shared-link.js';

/** The signed-in state. */
export type SignedIn =
  | { kind: 'key'; credentials: KeyCredentials }
  | { kind: 'account'; session: SessionAnswer; projectId: string }
  | { kind: 'link'; token: string };

/** What the app renders from. */
export interface SignInState {
  /** null while the server is asked whether a session exists. */
  state: SignedIn | 'signed-out' | null;
  /** Why the last sign-in ended, for the sign-in page. */
  notice: string | null;
  withKey(credentials: KeyCredentials): void;
  withAccount(session: SessionAnswer): void;
  chooseProject(projectId: string): void;
  signOut(): void;
  /** A request was refused with 401: the key, session or link no longer works. */
  ended(): void;
}

/** The credentials an API client of `signedIn` sends. */
export function credentialsOf(signedIn: SignedIn): Credentials {
  if (signedIn.kind === 'key') return signedIn.credentials;
  if (signedIn.kind === 'link') return { kind: 'link', token: signedIn.token };
  return { kind: 'account', projectId: signedIn.projectId };
}

/** The account's project: the one kept for this tab if it still exists, else its first. */
function projectOf(session: SessionAnswer, wanted: string | undefined): string {
  return session.projects.find((p) => p.id === wanted)?.id ?? session.projects[0]?.id ?? '';
}

/** The sign-in state of the app, over the tab's storage. */
export function useSignIn(basePath: string, storage: CredentialStorage): SignInState {
  const [state, setState] = useState<SignedIn | 'signed-out' | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // The state as of the last render, for the callbacks that must not change with it.
  const current = useRef(state);
  current.current = state;

  useEffect(() => {
    let cancelled = false;
    const token = sharedTokenOf(window.location.hash);
    if (token !== null) {
      // Out of the address at once: it is not shown, bookmarked or sent on by a later navigation.
      window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}#/`);
      saveCredentials(storage, { kind: 'link', token });
      setState({ kind: 'link', token });
      return;
    }
    const stored = loadCredentials(storage);
    if (stored !== null && stored.kind !== 'account') {
      setState(stored.kind === 'link' ? { kind: 'link', token: stored.token } : { kind: 'key', credentials: stored });
      return;
    }
    currentSession(basePath).then(
      (session) => {
        if (cancelled) return;
        setState(session === null ? 'signed-out' : { kind: 'account', session, projectId: projectOf(session, stored?.projectId) });
      },
      (error: unknown) => {
        if (cancelled) return;
        setNotice(messageOf(error));
        setState('signed-out');
      },
    );
    return () => {
      cancelled = true;
    };
  }, [basePath, storage]);

  const withKey = useCallback(
    (credentials: KeyCredentials) => {
      saveCredentials(storage, credentials);
      setNotice(null);
      setState({ kind: 'key', credentials });
    },
    [storage],
  );
  const withAccount = useCallback(
    (session: SessionAnswer) => {
      const projectId = projectOf(session, undefined);
      saveCredentials(storage, { kind: 'account', projectId });
      setNotice(null);
      setState({ kind: 'account', session, projectId });
    },
    [storage],
  );
  const chooseProject = useCallback(
    (projectId: string) => {
      saveCredentials(storage, { kind: 'account', projectId });
      setState((s) => (s !== null && s !== 'signed-out' && s.kind === 'account' ? { ...s, projectId } : s));
    },
    [storage],
  );
  const signOut = useCallback(() => {
    const wasAccount = state !== null && state !== 'signed-out' && state.kind === 'account';
    clearCredentials(storage);
    setState('signed-out');
    setNotice(null);
    if (wasAccount) endSession(basePath).catch((error: unknown) => setNotice(`Sign-out did not reach the server: ${messageOf(error)}`));
  }, [basePath, state, storage]);
  const ended = useCallback(() => {
    const s = current.current;
    // Every panel's request may be refused at once: the first one ends the sign-in, the rest find it ended.
    if (s === null || s === 'signed-out') return;
    clearCredentials(storage);
    setNotice(s.kind === 'link' ? 'This shared link no longer works.' : 'Your sign-in has ended; sign in again.');
    setState('signed-out');
    current.current = 'signed-out';
  }, [storage]);

  return { state, notice, withKey, withAccount, chooseProject, signOut, ended };
}
