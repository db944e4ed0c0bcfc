/**
 * Demo mode (`start --demo`, what `npm start` runs): a project for the example app, made on the
 * first start and reused after, whose keys the app fetches from `GET /demo/config.json`, so that a
 * newcomer sees their own clicks arrive without creating a project by hand.
 *
 * - The keys are stored hashed like any others. Their plaintext is kept in a local file (by default
 *   `demo-project.json` beside the SQLite file, `./data/` is git-ignored), written with mode 0600.
 * - On a later start the file is reused when its project and both keys are still live in the
 *   database; otherwise (a new database, a revoked key, a corrupt file) a new demo project is made
 *   and the file replaced.
 * - The demo project has the default bot policy of any project (`flag`): events of an automated
 *   browser (playwright, a headless Chromium) are stored, flagged, and left out of the reports. A
 *   reused project keeps whatever policy it has (`project set ID --bots …` changes it).
 * - `/demo/config.json` hands out a read key, so the keys must never leave the machine. The server
 *   refuses demo mode unless it listens on a loopback address only (`serve.ts`), and then serves
 *   the file to a direct loopback client only: one that asked a loopback host name (not a foreign
 *   name pointed at 127.0.0.1: DNS rebinding), from its own origin (`Origin` the server's own, no
 *   CORS headers), over HTTP/1.1 or later, with no proxy header (`Forwarded`, `X-Forwarded-*`,
 *   `X-Real-IP`, `Via`). A proxy on the same machine in its default setting (nginx's
 *   `proxy_pass http://127.0.0.1:8787;`) connects from loopback and rewrites `Host` to the
 *   upstream's loopback address, but speaks HTTP/1.0, which no browser does. Anything else gets the
 *   same 404 as a server without demo mode. Demo mode is for a developer's machine, never behind a
 *   proxy (`--trust-proxy` and `--demo` together are refused).
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Middleware } from 'koa';
import { generateKey, hashKey } from './api-keys.js';
import { HttpError } from './http-error.js';
import { randomId } from './ids.js';
import { DEFAULT_BOT_POLICY, type EventStore, type KeyKind } from './store/event-store.js';

/** The demo project's identity and plaintext keys, as kept in the file and served to the app. */
export interface DemoProject {
  projectId: string;
  /** Public write key, for `createAnalytics({ apiKey })`. */
  apiKey: string;
  /** Read key, for the example app's Events and Replay pages. */
  readKey: string;
}

/** Options of {@link ensureDemoProject}. */
export interface EnsureDemoProjectOptions {
  /** Where the plaintext keys are kept, e.g. `./data/demo-project.json`. */
  file: string;
  /** @default Date.now */
  now?: () => number;
  /** Name of a newly made project. @default 'Example app (demo)' */
  name?: string;
}

/** What {@link ensureDemoProject} did. */
export interface EnsuredDemoProject {
  demo: DemoProject;
  /** True when the project was made now; false when the file's project was reused. */
  created: boolean;
}

/** The path under which {@link demoConfigRoute} answers. */
export const DEMO_CONFIG_PATH = '/demo/config.json';

function isDemoProject(value: unknown): value is DemoProject {
  const v = value as Partial<DemoProject> | null;
  return typeof v === 'object' && v !== null && typeof v.projectId === 'string' && typeof v.apiKey === 'string' && typeof v.readKey === 'string';
}

async function keyIsLive(store: EventStore, projectId: string, key: string, kind: KeyKind): Promise<boolean> {
  const record = await store.findKeyByHash(hashKey(key));
  return record !== null && record.projectId === projectId && record.kind === kind && record.revokedAt === null;
}

/** The file's demo project if it is still usable in `store`, else undefined. */
async function reusable(store: EventStore, file: string): Promise<DemoProject | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isDemoProject(parsed)) return undefined;
  const { projectId, apiKey, readKey } = parsed;
  if ((await store.getProject(projectId)) === null) return undefined;
  if (!(await keyIsLive(store, projectId, apiKey, 'write')) || !(await keyIsLive(store, projectId, readKey, 'read'))) return undefined;
  return { projectId, apiKey, readKey };
}

/** Writes the file readable by its owner only, atomically (a crash leaves the old file or the new one). */
async function writePrivate(file: string, demo: DemoProject): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  // The mode of writeFile is filtered by the umask and ignored for an existing file.
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}

/**
 * Returns the demo project: the one in `file` when it is still live in `store`, else a new project
 * with a write key and a read key (stored hashed), whose plaintext is then written to `file`.
 * @param store - an initialised store
 */
export async function ensureDemoProject(store: EventStore, options: EnsureDemoProjectOptions): Promise<EnsuredDemoProject> {
  const existing = await reusable(store, options.file);
  if (existing !== undefined) return { demo: existing, created: false };
  const now = (options.now ?? Date.now)();
  const projectId = randomId('proj_', 16);
  await store.createProject({ id: projectId, name: options.name ?? 'Example app (demo)', createdAt: now, fullIp: false, corsOrigins: [], bots: DEFAULT_BOT_POLICY });
  const write = generateKey(projectId, 'write', now);
  const read = generateKey(projectId, 'read', now);
  await store.createKey(write.record);
  await store.createKey(read.record);
  const demo: DemoProject = { projectId, apiKey: write.key, readKey: read.key };
  await writePrivate(options.file, demo);
  return { demo, created: true };
}

/** True for 127.0.0.0/8 and ::1, also IPv4-mapped. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127(\.\d{1,3}){3}$/.test(v4) || address === '::1';
}

/** True for a `Host` header naming this machine: localhost (and *.localhost), 127.x.y.z, [::1]. */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower.endsWith('.localhost') || lower === '[::1]' || /^127(\.\d{1,3}){3}$/.test(lower);
}

/** Headers that proxies add: any of them means the request did not come straight from a browser. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'] as const;

/**
 * `GET /demo/config.json` → `{ projectId, apiKey, readKey }` for loopback clients only (see the
 * module comment); mount it before CORS so it never carries CORS headers. Other paths go on.
 * @throws HttpError `NOT_FOUND` (404) for a client it does not answer
 */
export function demoConfigRoute(demo: DemoProject): Middleware {
  const body = JSON.stringify(demo);
  return async (ctx, next) => {
    if (ctx.path !== DEMO_CONFIG_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const host = ctx.get('host');
    const origin = ctx.get('origin');
    const allowed =
      isLoopbackAddress(ctx.req.socket.remoteAddress) &&
      isLoopbackHost(host) &&
      ctx.req.httpVersionMajor >= 1 &&
      !(ctx.req.httpVersionMajor === 1 && ctx.req.httpVersionMinor === 0) &&
      !PROXY_HEADERS.some((name) => ctx.get(name) !== '') &&
      (origin === '' || origin === `http://${host}`) &&
      ctx.get('sec-fetch-site') !== 'cross-site' &&
      ctx.get('sec-fetch-site') !== 'same-site';
    if (!allowed) throw new HttpError('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}.`);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'application/json';
    ctx.body = body;
  };
}
