/**
 * Team access over HTTP (docs/protocol.md, "Accounts and sessions", "Shared links"): a real server
 * on an ephemeral port with a real SQLite file. Sign-in and its cookie, what each role may do (the
 * same powers as the key kinds), the same-origin check of cookie-authenticated changes, sign-out
 * and account changes ending sessions at once, expiry, rate-limited sign-in, and read-only shared
 * links that open reports and nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SESSION_LIFETIMES } from '../auth/sign-in-sessions.js';
import { type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { type TestAccount, createTestAccount } from '../../test-support/server/test-accounts.js';

let server: TestServer;
let viewer: TestAccount;
let admin: TestAccount;
/** The server's clock: the real one plus what a test moved it by. */
let clockOffset = 0;

beforeAll(async () => {
  server = await startTestServer('sqlite', {
    trustProxy: true,
    now: () => Date.now() + clockOffset,
    // A small per-address limit, so that a test reaches it in a few requests, and a large one per
    // account, as these tests sign the same accounts in many times (the default is tested apart).
    signInRateLimit: { ip: { ratePerSecond: 0.001, burst: 12 }, account: { ratePerSecond: 0.001, burst: 1000 } },
  });
  viewer = await createTestAccount(server.store, 'viewer');
  admin = await createTestAccount(server.store, 'admin');
});
afterAll(() => server?.close());

/** Requests as the dashboard's own page sends them: same origin, `Sec-Fetch-Site: same-origin` on changes. */
async function call(method: string, path: string, options: { cookie?: string; body?: unknown; headers?: Record<string, string>; forwardedFor?: string } = {}) {
  const headers: Record<string, string> = {
    ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
    ...(method === 'GET' ? {} : { 'sec-fetch-site': 'same-origin' }),
    ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    // Each caller its own address (through the trusted loopback proxy), so the per-address sign-in
    // limit counts only the test that is about it.
    'x-forwarded-for': options.forwardedFor ?? '198.51.100.1',
    ...options.headers,
  };
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // NDJSON or empty: kept as text.
  }
  return { status: res.status, body: body as Record<string, unknown>, setCookie: res.headers.get('set-cookie'), headers: res.headers };
}

let addresses = 0;
/** A fresh client address for a test of its own. */
const freshAddress = (): string => `198.51.100.${(++addresses % 200) + 20}`;

/** Signs in and answers the `Cookie` header to send after. */
async function signIn(who: TestAccount, forwardedFor = freshAddress()): Promise<string> {
  const res = await call('POST', '/api/v1/auth/sign-in', { body: { email: who.account.email, password: who.password }, forwardedFor });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const cookie = /^(sa_session=[^;]+)/.exec(res.setCookie ?? '')?.[1];
  expect(cookie).toBeDefined();
  return cookie as string;
}

const project = (): Record<string, string> => ({ 'x-project-id': server.project.id });

describe('POST /api/v1/auth/sign-in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie (no Secure over plain HTTP) and answers the account and projects', async () => {
    const res = await call('POST', '/api/v1/auth/sign-in', { body: { email: ` ${viewer.account.email.toUpperCase()} `, password: viewer.password }, forwardedFor: freshAddress() });
    expect(res.status).toBe(200);
    expect(res.body.account).toEqual({ id: viewer.account.id, email: viewer.account.email, role: 'viewer' });
    expect(res.body.projects).toContainEqual({ id: server.project.id, name: server.project.id });
    const attributes = (res.setCookie ?? '').split('; ').slice(1);
    expect(attributes).toEqual(['Path=/', `Max-Age=${DEFAULT_SESSION_LIFETIMES.absoluteMs / 1000}`, 'HttpOnly', 'SameSite=Strict']);
    const cookie = (res.setCookie ?? '').split(';')[0] as string;
    const session = await call('GET', '/api/v1/auth/session', { cookie });
    expect([session.status, (session.body.account as { role: string }).role]).toEqual([200, 'viewer']);
  });

  it('adds Secure behind a trusted proxy that says https, and not when an untrusted peer says it', async () => {
    const viaProxy = await call('POST', '/api/v1/auth/sign-in', {
      body: { email: viewer.account.email, password: viewer.password },
      headers: { 'x-forwarded-proto': 'https', origin: 'https://analytics.example', 'sec-fetch-site': 'same-origin' },
      forwardedFor: freshAddress(),
    });
    expect(viaProxy.setCookie).toMatch(/; Secure$/);
    const plain = await startTestServer('sqlite');
    try {
      const someone = await createTestAccount(plain.store, 'viewer');
      const res = await fetch(`${plain.url}/api/v1/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ email: someone.account.email, password: someone.password }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).not.toMatch(/Secure/);
    } finally {
      await plain.close();
    }
  });

  it('answers a wrong password, an unknown email and a disabled account alike: 401, no cookie', async () => {
    const disabled = await createTestAccount(server.store, 'viewer');
    await server.store.updateAccount(disabled.account.id, { disabledAt: Date.now() });
    for (const body of [
      { email: viewer.account.email, password: 'not the password' },
      { email: 'nobody@example.com', password: viewer.password },
      { email: disabled.account.email, password: disabled.password },
    ]) {
      const res = await call('POST', '/api/v1/auth/sign-in', { body, forwardedFor: freshAddress() });
      expect([res.status, res.body, res.setCookie]).toEqual([401, { error: 'Wrong email or password.', code: 'AUTH_ERROR' }, null]);
    }
  });

  it('refuses a sign-in from another site (login CSRF) and a body that is not JSON', async () => {
    const body = { email: viewer.account.email, password: viewer.password };
    const crossSite = await call('POST', '/api/v1/auth/sign-in', { body, headers: { 'sec-fetch-site': 'cross-site' }, forwardedFor: freshAddress() });
    expect([crossSite.status, crossSite.body.code, crossSite.setCookie]).toEqual([403, 'FORBIDDEN', null]);
    const form = await fetch(`${server.url}/api/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: `email=${encodeURIComponent(viewer.account.email)}&password=${encodeURIComponent(viewer.password)}`,
    });
    expect(form.status).toBe(415);
  });

  it('limits attempts per account by default (5, right or wrong) with 429 and Retry-After, without counting other accounts', async () => {
    const defaults = await startTestServer('sqlite');
    try {
      const target = await createTestAccount(defaults.store, 'viewer');
      const other = await createTestAccount(defaults.store, 'viewer');
      const attempt = (who: TestAccount, password: string) =>
        fetch(`${defaults.url}/api/v1/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
          body: JSON.stringify({ email: who.account.email, password }),
        });
      for (let i = 0; i < 5; i++) expect((await attempt(target, 'wrong password')).status).toBe(401);
      const limited = await attempt(target, target.password);
      expect([limited.status, ((await limited.json()) as { code: string }).code, Number(limited.headers.get('retry-after')) > 0]).toEqual([429, 'RATE_LIMITED', true]);
      expect((await attempt(other, other.password)).status).toBe(200);
    } finally {
      await defaults.close();
    }
  });

  it('limits attempts per client address across accounts', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) {
      statuses.push((await call('POST', '/api/v1/auth/sign-in', { body: { email: `guess-${i}@example.com`, password: 'guess' }, forwardedFor: address })).status);
    }
    expect(statuses).toEqual([...Array<number>(12).fill(401), 429]);
  });
});

describe('what a signed-in account may do: a viewer as a read key, an admin as an admin key', () => {
  beforeAll(async () => {
    const res = await server.postBatch([makeEvent({ user_id: 'erase-me' }), makeEvent({ user_id: 'keep-me' })]);
    expect(res.status).toBe(200);
  });

  it('lets a viewer read reports, events and recordings, and refuses erasure, export and links with 403', async () => {
    const cookie = await signIn(viewer);
    for (const path of ['/api/v1/reports/timeseries', '/api/v1/events?limit=5', '/api/v1/sessions']) {
      expect([path, (await call('GET', path, { cookie, headers: project() })).status]).toEqual([path, 200]);
    }
    for (const [method, path] of [['DELETE', '/api/v1/users/erase-me'], ['GET', '/api/v1/export'], ['GET', '/api/v1/links'], ['POST', '/api/v1/links']] as const) {
      const res = await call(method, path, { cookie, headers: project(), ...(method === 'POST' ? { body: {} } : {}) });
      expect([path, res.status, res.body]).toEqual([path, 403, { error: 'This needs an admin account; viewers read reports, events and replays.', code: 'FORBIDDEN' }]);
    }
    const { events } = await server.store.queryEvents({ projectId: server.project.id, userId: 'erase-me', limit: 10 });
    expect(events).toHaveLength(1);
  });

  it('lets an admin export and erase, and never send data', async () => {
    const cookie = await signIn(admin);
    const exported = await call('GET', '/api/v1/export', { cookie, headers: project() });
    expect(exported.status).toBe(200);
    expect(String(exported.body)).toContain('erase-me');
    const erased = await call('DELETE', '/api/v1/users/erase-me', { cookie, headers: project() });
    expect([erased.status, erased.body.events]).toEqual([200, 1]);
    const send = await call('POST', '/api/v1/events/batch', { cookie, headers: project(), body: [makeEvent()] });
    expect([send.status, send.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('needs X-Project-ID naming a project that exists', async () => {
    const cookie = await signIn(viewer);
    expect((await call('GET', '/api/v1/reports/timeseries', { cookie })).status).toBe(401);
    expect((await call('GET', '/api/v1/reports/timeseries', { cookie, headers: { 'x-project-id': 'proj_missing' } })).status).toBe(401);
  });

  it('refuses a cookie-authenticated change from another origin, or from a request that names none', async () => {
    const cookie = await signIn(admin);
    const cases: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': '', origin: 'https://evil.example' },
      { 'sec-fetch-site': '' },
    ];
    for (const headers of cases) {
      const res = await call('DELETE', '/api/v1/users/keep-me', { cookie, headers: { ...project(), ...headers } });
      expect([headers, res.status, res.body.code]).toEqual([headers, 403, 'FORBIDDEN']);
    }
    // An older browser without Sec-Fetch-Site, on the server's own origin, is let through.
    const own = new URL(server.url).host;
    const ok = await call('DELETE', '/api/v1/users/nobody-at-all', { cookie, headers: { ...project(), 'sec-fetch-site': '', origin: `http://${own}` } });
    expect(ok.status).toBe(200);
    const { events } = await server.store.queryEvents({ projectId: server.project.id, userId: 'keep-me', limit: 10 });
    expect(events).toHaveLength(1);
  });

  it('keeps the read key working for scripts, with no cookie at all', async () => {
    const res = await fetch(`${server.url}/api/v1/reports/timeseries`, { headers: { authorization: `ApiKey ${server.project.readKey}`, ...project() } });
    expect(res.status).toBe(200);
  });
});

describe('sessions end', () => {
  it('at sign-out, on the server: the old cookie is refused after', async () => {
    const cookie = await signIn(viewer);
    const out = await call('POST', '/api/v1/auth/sign-out', { cookie });
    expect([out.status, out.setCookie?.split('; ').slice(0, 3)]).toEqual([200, ['sa_session=', 'Path=/', 'Max-Age=0']]);
    expect((await call('GET', '/api/v1/auth/session', { cookie })).status).toBe(401);
    expect((await call('GET', '/api/v1/reports/timeseries', { cookie, headers: project() })).body).toEqual({ error: 'Your session has ended; sign in again.', code: 'AUTH_ERROR' });
  });

  it('at once when the account is disabled or deleted', async () => {
    for (const change of ['disable', 'delete'] as const) {
      const someone = await createTestAccount(server.store, 'admin');
      const cookie = await signIn(someone);
      expect((await call('GET', '/api/v1/auth/session', { cookie })).status).toBe(200);
      if (change === 'disable') await server.store.updateAccount(someone.account.id, { disabledAt: Date.now() });
      else await server.store.deleteAccount(someone.account.id);
      expect([change, (await call('GET', '/api/v1/events', { cookie, headers: project() })).status]).toEqual([change, 401]);
    }
  });

  it('but the current one when the password changes; the new password signs in, the old does not', async () => {
    const someone = await createTestAccount(server.store, 'viewer');
    const here = await signIn(someone);
    const elsewhere = await signIn(someone);
    const wrong = await call('POST', '/api/v1/auth/password', { cookie: here, body: { current: 'not it', password: 'a new password 1' } });
    expect(wrong.status).toBe(401);
    const short = await call('POST', '/api/v1/auth/password', { cookie: here, body: { current: someone.password, password: 'short' } });
    expect([short.status, short.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    const changed = await call('POST', '/api/v1/auth/password', { cookie: here, body: { current: someone.password, password: 'a new password 1' } });
    expect(changed.status).toBe(200);
    expect((await call('GET', '/api/v1/auth/session', { cookie: here })).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/session', { cookie: elsewhere })).status).toBe(401);
    await signIn({ account: someone.account, password: 'a new password 1' });
    const old = await call('POST', '/api/v1/auth/sign-in', { body: { email: someone.account.email, password: someone.password }, forwardedFor: freshAddress() });
    expect(old.status).toBe(401);
  });

  it('when idle for the idle limit, and at the absolute limit however busy', async () => {
    const { idleMs, absoluteMs } = DEFAULT_SESSION_LIFETIMES;
    try {
      const idle = await signIn(viewer);
      clockOffset += idleMs - 1000;
      expect((await call('GET', '/api/v1/auth/session', { cookie: idle })).status).toBe(200);
      clockOffset += idleMs;
      expect((await call('GET', '/api/v1/auth/session', { cookie: idle })).status).toBe(401);

      const busy = await signIn(viewer);
      // Used every few hours: never idle, but old at the absolute limit.
      for (let used = 0; used + idleMs / 2 < absoluteMs; used += idleMs / 2) {
        clockOffset += idleMs / 2;
        expect((await call('GET', '/api/v1/auth/session', { cookie: busy })).status).toBe(200);
      }
      clockOffset += idleMs / 2;
      expect((await call('GET', '/api/v1/auth/session', { cookie: busy })).status).toBe(401);
    } finally {
      clockOffset = 0;
    }
  });
});

describe('shared links', () => {
  it('are made by an admin, open the reports of their project only, and stop at revocation', async () => {
    const cookie = await signIn(admin);
    const made = await call('POST', '/api/v1/links', { cookie, headers: project(), body: { name: 'wall screen' } });
    expect(made.status).toBe(201);
    const token = made.body.token as string;
    const link = made.body.link as { id: string; name: string; prefix: string; revoked_at: string | null };
    expect([token.startsWith('sa_l_'), token.length, link.name, link.prefix, made.body.path]).toEqual([true, 37, 'wall screen', token.slice(0, 9), `/dashboard/#/shared/${token}`]);
    // The store keeps the hash only.
    expect((await server.store.listSharedLinks(server.project.id)).map((l) => l.hash)).not.toContain(token);

    const shared = { authorization: `SharedLink ${token}` };
    for (const path of ['/api/v1/reports/timeseries', '/api/v1/reports/top/page', '/api/v1/reports/live']) {
      expect([path, (await call('GET', path, { headers: shared })).status]).toEqual([path, 200]);
    }
    for (const [method, path] of [['GET', '/api/v1/events'], ['GET', '/api/v1/sessions'], ['GET', '/api/v1/sessions/s1/recording'], ['GET', '/api/v1/export'], ['DELETE', '/api/v1/users/keep-me'], ['GET', '/api/v1/links']] as const) {
      const res = await call(method, path, { headers: shared });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'FORBIDDEN']);
    }
    // Another project named beside it: refused.
    const other = await server.createProject();
    expect((await call('GET', '/api/v1/reports/timeseries', { headers: { ...shared, 'x-project-id': other.id } })).status).toBe(401);

    const listed = await call('GET', '/api/v1/links', { cookie, headers: project() });
    expect((listed.body.links as Array<{ id: string }>).map((l) => l.id)).toContain(link.id);
    const revoked = await call('DELETE', `/api/v1/links/${link.id}`, { cookie, headers: project() });
    expect(revoked.status).toBe(200);
    expect((await call('DELETE', `/api/v1/links/${link.id}`, { cookie, headers: project() })).status).toBe(404);
    const after = await call('GET', '/api/v1/reports/timeseries', { headers: shared });
    expect([after.status, after.body]).toEqual([401, { error: 'This shared link does not exist or was revoked.', code: 'AUTH_ERROR' }]);
  });

  it('are made and revoked with an admin key too, and never with a read key', async () => {
    const key = (k: string) => ({ authorization: `ApiKey ${k}`, ...project() });
    const made = await call('POST', '/api/v1/links', { headers: key(server.project.adminKey), body: {} });
    expect(made.status).toBe(201);
    expect((await call('POST', '/api/v1/links', { headers: key(server.project.readKey), body: {} })).status).toBe(401);
    const id = (made.body.link as { id: string }).id;
    expect((await call('DELETE', `/api/v1/links/${id}`, { headers: key(server.project.readKey) })).status).toBe(401);
    expect((await call('DELETE', `/api/v1/links/${id}`, { headers: key(server.project.adminKey) })).status).toBe(200);
  });
});
