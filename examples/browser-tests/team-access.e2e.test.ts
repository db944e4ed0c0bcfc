/**
 * Team access in Chromium (docs/decisions.md, "Team access"): the dashboard built as the server
 * package ships it, served by the real server on a real SQLite file. A viewer signs in with email
 * and password (the session in an HttpOnly, SameSite=Strict cookie) and sees the reports but no
 * admin page, and the server refuses their erasure; an admin makes a read-only shared link and
 * erases a user; the link opened in a fresh browser context shows the reports and nothing else;
 * sign-out ends the session on the server; a revoked link is refused.
 *
 * Set SA_TEAM_SCREENSHOTS=DIR to keep screenshots of the sign-in page at 1280 and 390 px width there.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import { type TestAccount, createTestAccount } from '../../test-support/server/test-accounts.js';
import { type TestServer, makeEvent } from '../../test-support/server/test-server.js';
import { screenshot, startDashboardServer } from '../../test-support/browser/dashboard-rig.js';

const SHOTS = process.env.SA_TEAM_SCREENSHOTS;

let server: TestServer;
let browser: Browser;
let viewer: TestAccount;
let admin: TestAccount;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  server = await startDashboardServer();
  viewer = await createTestAccount(server.store, 'viewer');
  admin = await createTestAccount(server.store, 'admin');
  const now = Date.now();
  const page = JSON.stringify({ url: 'https://shop.example/', path: '/', title: 'Home' });
  const res = await server.postBatch([
    makeEvent({ event_type: 'page_view', user_id: 'erase-me', session_id: 's-1', timestamp: new Date(now - 60_000).toISOString(), properties: { page } }),
    makeEvent({ event_type: 'page_view', user_id: 'keep-me', session_id: 's-2', timestamp: new Date(now - 30_000).toISOString(), properties: { page } }),
  ]);
  expect(res.status).toBe(200);
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await server?.close();
});

async function newPage(width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: width > 600 ? 800 : 844 } });
  contexts.push(context);
  return context.newPage();
}

const shot = (p: Page, name: string): Promise<void> => screenshot(p, SHOTS, name);

/** Opens the dashboard and signs in with email and password. */
async function signIn(who: TestAccount, p?: Page): Promise<Page> {
  const page = p ?? (await newPage());
  await page.goto(`${server.url}/dashboard/`);
  await page.getByLabel('Email').fill(who.account.email);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('signed-in-as').waitFor();
  return page;
}

/** The user ids of the project's stored events. */
async function storedUsers(): Promise<string[]> {
  const { events } = await server.store.queryEvents({ projectId: server.project.id, limit: 100 });
  return events.map((e) => e.userId ?? '').sort();
}

/** What the page's own script gets from a same-origin call with its cookie (the dashboard's way). */
const callFromPage = (p: Page, method: string, path: string, projectId: string) =>
  p.evaluate(
    async ({ method, path, projectId }) => {
      const res = await fetch(path, { method, headers: { 'X-Project-ID': projectId }, credentials: 'same-origin' });
      return { status: res.status, body: (await res.json()) as { code?: string } };
    },
    { method, path, projectId },
  );

describe('team access in the dashboard, in Chromium', () => {
  it('shows a sign-in page with email and password first, and the read-key form beneath', async () => {
    for (const width of [1280, 390]) {
      const p = await newPage(width);
      await p.goto(`${server.url}/dashboard/`);
      await p.getByLabel('Email').waitFor();
      expect(await p.getByRole('button', { name: 'Log in' }).isVisible()).toBe(true);
      expect(await p.getByLabel('Read key').isVisible()).toBe(true);
      // Nothing sticks out sideways on a phone.
      expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await shot(p, `sign-in-${width}`);
    }
  });

  it('tells a wrong password, and signs a viewer in with an HttpOnly, SameSite=Strict cookie', async () => {
    const p = await newPage();
    await p.goto(`${server.url}/dashboard/`);
    await p.getByLabel('Email').fill(viewer.account.email);
    await p.getByLabel('Password', { exact: true }).fill('not the password');
    await p.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => p.getByRole('alert').textContent()).toBe('Wrong email or password.');
    await signIn(viewer, p);
    const cookies = await p.context().cookies();
    const session = cookies.find((c) => c.name === 'sa_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    // Not readable by the page's scripts.
    expect(await p.evaluate(() => document.cookie)).not.toContain('sa_session');
  });

  it('lets a viewer see the reports but not the admin page, and the server refuses their erasure', async () => {
    const p = await signIn(viewer);
    await p.getByTestId('stat-visitors').waitFor();
    await expect.poll(async () => (await p.getByTestId('stat-visitors').textContent())?.trim()).not.toBe('…');
    expect(await p.getByTestId('signed-in-as').textContent()).toBe(`${viewer.account.email} viewer`);
    const nav = p.getByRole('navigation', { name: 'Dashboard' });
    expect(await nav.getByRole('link', { name: 'Admin' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Sessions' }).count()).toBe(1);
    expect(await p.getByRole('link', { name: 'Share' }).count()).toBe(0);
    await p.goto(`${server.url}/dashboard/#/admin`);
    expect(await p.getByTestId('not-allowed').textContent()).toBe('Only admins open this page.');
    const refused = await callFromPage(p, 'DELETE', '/api/v1/users/erase-me', server.project.id);
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    expect(await storedUsers()).toEqual(['erase-me', 'keep-me']);
  });

  let linkUrl = '';
  let adminPage: Page;

  it('lets an admin make a shared link and erase a user from the admin page', async () => {
    adminPage = await signIn(admin);
    const p = adminPage;
    expect(await p.getByTestId('signed-in-as').textContent()).toBe(`${admin.account.email} admin`);
    await p.getByRole('link', { name: 'Share' }).click();
    await p.getByTestId('shared-links').getByText('No links yet.').waitFor();
    await p.getByLabel('What is it for?').fill('wall screen');
    await p.getByRole('button', { name: 'Create a link' }).click();
    linkUrl = (await p.getByTestId('new-link').inputValue()).trim();
    expect(linkUrl).toMatch(new RegExp(`^${server.url}/dashboard/#/shared/sa_l_[A-Za-z0-9]{32}$`));
    await expect.poll(() => p.getByTestId('shared-link-row').count()).toBe(1);

    p.once('dialog', (dialog) => void dialog.accept());
    await p.getByLabel('User id to erase').fill('erase-me');
    await p.getByRole('button', { name: 'Erase user' }).click();
    await expect.poll(() => p.getByTestId('erase-result').textContent()).toBe('Erased 1 event and 0 recording chunks of erase-me.');
    expect(await storedUsers()).toEqual(['keep-me']);
  });

  it('opens the shared link in a fresh browser: reports only, the token out of the address', async () => {
    const p = await newPage();
    await p.goto(linkUrl);
    await p.getByTestId('shared-view').waitFor();
    await p.getByTestId('stat-visitors').waitFor();
    await expect.poll(async () => (await p.getByTestId('stat-visitors').textContent())?.trim()).toBe('1');
    expect(p.url()).not.toContain('sa_l_');
    const nav = p.getByRole('navigation', { name: 'Dashboard' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Errors', 'Web vitals', 'Funnels', 'Experiments', 'Heatmaps']);
    await p.goto(`${server.url}/dashboard/#/sessions`);
    expect(await p.getByTestId('not-allowed').textContent()).toBe('A shared link shows the reports only.');
    // The server refuses what the view hides: the events list with the link's token.
    const token = linkUrl.split('/shared/')[1] as string;
    const events = await fetch(`${server.url}/api/v1/events`, { headers: { authorization: `SharedLink ${token}` } });
    expect(events.status).toBe(403);
  });

  it('ends the session on the server at sign-out', async () => {
    const p = adminPage;
    const cookie = (await p.context().cookies()).find((c) => c.name === 'sa_session');
    expect(cookie).toBeDefined();
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByRole('button', { name: 'Log in' }).waitFor();
    const replayed = await fetch(`${server.url}/api/v1/auth/session`, { headers: { cookie: `sa_session=${cookie?.value ?? ''}` } });
    expect(replayed.status).toBe(401);
  });

  it('refuses a revoked link: the page that had it open and a fresh one both land on the sign-in page', async () => {
    const shared = await newPage();
    await shared.goto(linkUrl);
    await shared.getByTestId('stat-visitors').waitFor();

    const p = await signIn(admin);
    await p.getByRole('link', { name: 'Share' }).click();
    await p.getByRole('button', { name: 'Revoke wall screen' }).click();
    await expect.poll(() => p.getByTestId('shared-link-row').getByText('revoked').count()).toBe(1);

    await shared.reload();
    await expect.poll(() => shared.getByRole('status').first().textContent()).toBe('This shared link no longer works.');
    const fresh = await newPage();
    await fresh.goto(linkUrl);
    await expect.poll(() => fresh.getByRole('status').first().textContent()).toBe('This shared link no longer works.');
    await fresh.getByRole('button', { name: 'Log in' }).waitFor();
  });
});
