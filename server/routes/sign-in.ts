import type { Context, Middleware } from 'koa';
import { hashPassword, passwordProblem, verifyPassword } from '../auth/password-hash.js';
import { readSessionCookie, sessionCookie } from '../auth/session-cookie.js';
import { createBodyReader } from '../body.js';
import { HttpError } from '../http-error.js';
import { randomId } from '../ids.js';
import type { Account, SignedInAccount } from '../store/account-store.js';
import { readJsonObject, stringField } from './json-object-body.js';
import type { RouteContext } from './route-context.js';

/*
 * The dashboard's sign-in (docs/protocol.md, "Accounts and sessions"): `POST /api/v1/auth/sign-in`
 * sets the session cookie, `GET /api/v1/auth/session` says who is signed in and which projects
 * there are, `POST /api/v1/auth/sign-out` ends the session on the server, and
 * `POST /api/v1/auth/password` changes the password and ends every other session of the account.
 */

/** Sign-in bodies are an email and a password: a few hundred bytes. */
const readSmallBody = createBodyReader(16 * 1024);

/** An email as accounts are stored: trimmed, lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

const accountToWire = (a: Account) => ({ id: a.id, email: a.email, role: a.role });

/** The signed-in account of the request's cookie, or a 401. */
async function signedIn(ctx: Context, rc: RouteContext): Promise<{ token: string; found: SignedInAccount }> {
  const token = ctx.get('authorization') === '' ? readSessionCookie(ctx) : null;
  const found = token === null ? null : await rc.signIns.resolve(token);
  if (token === null || found === null) throw new HttpError('AUTH_ERROR', 'Not signed in, or the session has ended; sign in again.');
  return { token, found };
}

/** What the dashboard needs after a sign-in: the account and the projects it may open (all of them). */
async function sessionAnswer(rc: RouteContext, account: Account) {
  const projects = await rc.store.listProjects();
  return { account: accountToWire(account), projects: projects.map((p) => ({ id: p.id, name: p.name })) };
}

/** The cookie's attributes for this request. */
const cookieOf = (ctx: Context, rc: RouteContext, token: string, maxAgeSeconds: number): string =>
  sessionCookie(token, { path: rc.basePath === '' ? '/' : rc.basePath, secure: rc.origin.isHttps(ctx), maxAgeSeconds });

/**
 * `POST /api/v1/auth/sign-in` with `{ email, password }`: 200 with the account and the projects,
 * and `Set-Cookie` with the session; 401 `AUTH_ERROR` for a wrong email or password or a disabled
 * account, all alike; 429 `RATE_LIMITED` past the attempts allowed per account and per address.
 */
export function signInRoute(rc: RouteContext): Middleware {
  // Unknown emails are checked against this hash, so that they take as long as known ones and the
  // time of an answer does not tell which emails have accounts.
  let unknownHash: Promise<string> | null = null;
  return async (ctx) => {
    // Login CSRF: another site must not sign a visitor's browser in to an account of its choosing.
    rc.origin.assertSameOrigin(ctx);
    const body = await readJsonObject(ctx, readSmallBody);
    const email = normalizeEmail(stringField(body, 'email', { max: 320 }));
    const password = stringField(body, 'password', { max: 1000 });
    rc.signInLimiter.attempt(email, ctx.ip);
    const account = await rc.store.findAccountByEmail(email);
    unknownHash ??= hashPassword(randomId('', 24));
    const matches = await verifyPassword(password, account?.passwordHash ?? (await unknownHash));
    if (account === null || !matches || account.disabledAt !== null) {
      rc.logger.info('sign-in refused', { email });
      throw new HttpError('AUTH_ERROR', 'Wrong email or password.');
    }
    const { token } = await rc.signIns.start(account.id);
    ctx.set('Set-Cookie', cookieOf(ctx, rc, token, rc.signIns.lifetimes.absoluteMs / 1000));
    rc.logger.info('signed in', { accountId: account.id });
    ctx.body = await sessionAnswer(rc, account);
  };
}

/** `GET /api/v1/auth/session`: 200 with the account and the projects, or 401 when not signed in. */
export function sessionRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const { found } = await signedIn(ctx, rc);
    ctx.body = await sessionAnswer(rc, found.account);
  };
}

/**
 * `POST /api/v1/auth/sign-out`: deletes the session on the server (a copy of the cookie is
 * worthless from then on) and clears the cookie. 200 whether or not a session was there.
 */
export function signOutRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    rc.origin.assertSameOrigin(ctx);
    const token = readSessionCookie(ctx);
    if (token !== null) await rc.signIns.end(token);
    ctx.set('Set-Cookie', cookieOf(ctx, rc, '', 0));
    ctx.body = { success: true };
  };
}

/**
 * `POST /api/v1/auth/password` with `{ current, password }`: checks the current password (counted
 * as a sign-in attempt), stores the new one's hash and ends every other session of the account.
 */
export function changePasswordRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const { found } = await signedIn(ctx, rc);
    rc.origin.assertSameOrigin(ctx);
    const body = await readJsonObject(ctx, readSmallBody);
    const current = stringField(body, 'current', { max: 1000 });
    const password = stringField(body, 'password', { max: 1000 });
    rc.signInLimiter.attempt(found.account.email, ctx.ip);
    if (!(await verifyPassword(current, found.account.passwordHash))) throw new HttpError('AUTH_ERROR', 'The current password is wrong.');
    const problem = passwordProblem(password);
    if (problem !== null) throw new HttpError('VALIDATION_ERROR', problem);
    await rc.store.updateAccount(found.account.id, { passwordHash: await hashPassword(password), keepSessionId: found.session.id });
    ctx.body = { success: true };
  };
}
