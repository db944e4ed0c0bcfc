/**
 * What the dashboard's end-to-end tests share: the dashboard built once per run (by the browser
 * project's global setup, `examples/browser-tests/global-setup.ts`, with the Vite config the
 * server package's build uses), a real server that serves it, sign-in with a project's read key,
 * the seeding of recordings and events through the real API, and screenshots.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { inject } from 'vitest';
import type { AppOptions } from '../../server/app.js';
import { type TestProject, type TestServer, startTestServer } from '../server/test-server.js';

/** The two widths every dashboard test looks at: a desktop and a phone. */
export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** The folder of this run's dashboard build (`inject('dashboardDir')`). */
export function dashboardBuild(): string {
  return inject('dashboardDir');
}

/** A real server on a fresh SQLite file, serving this run's dashboard build at /dashboard/. */
export function startDashboardServer(options: Partial<AppOptions> = {}): Promise<TestServer> {
  return startTestServer('sqlite', { dashboard: { root: dashboardBuild() }, ...options });
}

/** Options of {@link signInWithReadKey}. */
export interface ReadKeySignIn {
  /** The address opened first. @default `${server.url}/dashboard/` */
  url?: string;
  /** Called on the sign-in page before it is submitted (a screenshot of it, an assertion). */
  beforeSubmit?: (page: Page) => Promise<void>;
}

/**
 * Opens the dashboard in a new page of `context` and signs in with the project's id and read key
 * as a person would; resolves once the overview shows its first number.
 */
export async function signInWithReadKey(context: BrowserContext, server: TestServer, options: ReadKeySignIn = {}): Promise<Page> {
  const p = await context.newPage();
  await p.goto(options.url ?? `${server.url}/dashboard/`);
  await p.getByLabel('Project id').fill(server.project.id);
  await p.getByLabel('Read key').fill(server.project.readKey);
  await options.beforeSubmit?.(p);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByTestId('stat-visitors').waitFor();
  return p;
}

/**
 * POSTs a JSON body to `path` of the server with the project's write key; throws unless it
 * answered 200.
 */
export async function postWithWriteKey(server: TestServer, path: string, body: unknown, project: TestProject = server.project): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.id },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
}

/** An rrweb event as the recorder uploads it. */
export interface RecordedEvent {
  type: number;
  data: unknown;
  timestamp: number;
}

/** What {@link recordedPage} records. */
export interface RecordedPageOptions {
  /** The recording's first moment (ms since the epoch). */
  start: number;
  /** The page's address. */
  href: string;
  /** The page's only text. */
  text: string;
  /** When the first of 20 mouse moves, 400 ms apart, comes after `start`. */
  firstMoveAt: number;
}

/**
 * A recording of a page with one line of text: its meta and full snapshot, then the mouse moving
 * for about eight seconds (rrweb's event types 4, 2 and 3).
 */
export function recordedPage({ start, href, text, firstMoveAt }: RecordedPageOptions): RecordedEvent[] {
  const snapshot = {
    node: {
      type: 0,
      id: 1,
      childNodes: [
        { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
        {
          type: 2, id: 3, tagName: 'html', attributes: {}, childNodes: [
            { type: 2, id: 4, tagName: 'head', attributes: {}, childNodes: [] },
            { type: 2, id: 5, tagName: 'body', attributes: { style: 'font: 24px sans-serif; padding: 40px' }, childNodes: [{ type: 3, id: 6, textContent: text }] },
          ],
        },
      ],
    },
    initialOffset: { left: 0, top: 0 },
  };
  return [
    { type: 4, data: { href, width: 1024, height: 640 }, timestamp: start },
    { type: 2, data: snapshot, timestamp: start + 10 },
    ...Array.from({ length: 20 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: 40 + i * 20, y: 100 + i * 10, id: 5, timeOffset: 0 }] }, timestamp: start + firstMoveAt + i * 400 })),
  ];
}

/** Uploads a whole recording of `session` as one final chunk. */
export function postRecording(server: TestServer, session: string, events: readonly RecordedEvent[], upload: { durationMs: number; startUrl: string }): Promise<void> {
  return postWithWriteKey(server, `/api/v1/sessions/${session}/recordings`, { events, duration: upload.durationMs / 1000, event_offset: 0, is_final: true, start_url: upload.startUrl });
}

/**
 * Saves a full-page screenshot of `p` as `<dir>/<name>.png` when `dir` is set (each test file names
 * the variable that sets it), from the top: a full-page shot of a scrolled page draws the sticky
 * bar in the middle.
 */
export async function screenshot(p: Page, dir: string | undefined, name: string): Promise<void> {
  if (dir === undefined) return;
  mkdirSync(dir, { recursive: true });
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
