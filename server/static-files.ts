/**
 * Serves a built single-page app (the example app, `dist/example`) from the ingestion server, as
 * the fallback after the API routes: `npm start` opens it at `/`. Opt-in (`start --serve-example`).
 *
 * - Files under the root only: a path with `..`, `.`-segments, a backslash or a NUL byte (also
 *   percent-encoded), or that resolves (symlinks included) outside the root, is answered 404.
 * - An extension-less path that is no file (`/events`, `/replay/abc`) gets `index.html`, so the
 *   app's client-side routes survive a reload (SPA fallback). A missing file with an extension is a
 *   plain 404, so a broken asset link is not answered with HTML.
 * - `/api/…` is never served from files: a wrong API address must stay a JSON 404.
 * - Content types come from a fixed table; Vite's hashed assets (`assets/name-HASH.ext`) are cached
 *   for a year as immutable, HTML pages (`index.html`, also as the SPA fallback) are never stored
 *   (`no-store`), everything else is revalidated (`no-cache`, with an ETag).
 * - Every file answer carries the same Content-Security-Policy ({@link contentSecurityPolicy}),
 *   `X-Content-Type-Options: nosniff` and `Referrer-Policy: same-origin`: on every file, not only
 *   the HTML, because a worker script gets its policy from its own answer, and an SVG opened
 *   directly is a document.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { Middleware } from 'koa';
import { HttpError } from './http-error.js';

/** Options of {@link staticFiles}. */
export interface StaticFilesOptions {
  /** Directory served at `/`; it must contain `index.html` for the SPA fallback. */
  root: string;
  /** Path prefixes never served from files (they belong to the API). @default ['/api/'] */
  reservedPrefixes?: readonly string[];
  /**
   * Serve the root under this path instead of at `/` (the dashboard: `/dashboard`, or
   * `/stats/dashboard` under a base path): only requests below it are answered, `MOUNT` itself is
   * redirected to `MOUNT/` so that the app's relative asset URLs resolve. No trailing slash.
   * @default '' (served at `/`)
   */
  mountPath?: string;
  /**
   * Origins besides the page's own that the app may call (the policy's `connect-src`): the API of
   * an example app built with `VITE_SA_ENDPOINT` on another origin (examples/app/src/config.ts).
   * Each is an absolute `http:` or `https:` URL; only its origin is used.
   * @default [] (the page's own origin only)
   */
  connectSources?: readonly string[];
}

/** Content types by file extension; anything else is `application/octet-stream`. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** `Cache-Control` of content-hashed assets: the name changes when the content does. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** `Cache-Control` of everything else: use it, but ask first (ETag). */
export const REVALIDATE = 'no-cache';

/** `Cache-Control` of HTML pages: each load asks the server, and no copy is kept anywhere. */
export const NO_STORE = 'no-store';
/** `Referrer-Policy` of every file: the full address to the same origin (the API), none elsewhere. */
export const REFERRER_POLICY = 'same-origin';

/**
 * The Content-Security-Policy of the served apps (the dashboard, the example app): their own
 * scripts, styles and workers only, the API on the same origin (and `connectSources`), no inline
 * script, no plugins, never framed. The built pages have no inline script: Vite emits
 * `<script type="module" src>` only, and the browser tests of both apps
 * (examples/browser-tests/dashboard.e2e.test.ts, examples/app/example-app.e2e.test.ts) fail on any
 * violation of this policy.
 *
 * - `style-src 'unsafe-inline'`: the session replay (rrweb's Replayer in the example app,
 *   rrweb-player in the dashboard) rebuilds the recorded page in an `about:blank` iframe, which
 *   inherits this policy, with the recorded stylesheets as `<style>` elements (the recorder
 *   inlines them, main/recorder/capture-options.ts) and `style` attributes; rrweb-player also
 *   writes `style` attributes on its own controls. Inline style cannot run script.
 * - `img-src`, `font-src`, `media-src` with `data:`, `blob:` and `https:`: the pages'
 *   `<link rel="icon" href="data:,">` and rrweb-player's CSS icons, and what a replayed page loads
 *   from its own site (its images, fonts and videos, by their recorded https addresses). None of
 *   these can run script; the price is that a replay asks the recorded site for its images, as the
 *   visitor's browser did.
 * - `worker-src 'self'`: the example app starts the client's delivery worker from the file Vite
 *   ships beside it (`assets/worker-HASH.js`), so the client's `blob:` fallback is never tried
 *   (main/delivery/core-connection.ts); without any worker it would run in-process.
 * - `frame-src https:`: the dashboard's heatmap, for a page no recording shows, frames the page
 *   itself, live, from its site (dashboard/src/heatmap/heatmap-map.tsx), in a sandbox without
 *   scripts or the dashboard's origin. The replay's iframe has no `src` (`about:blank` is not
 *   fetched), and a replayed page's own frames load nothing: the recorder drops their `src`
 *   (rrweb-snapshot keeps an iframe's address only when told to).
 *
 * @param connectSources absolute http(s) URLs whose origins the page may also call
 * @throws Error for an entry that is not an absolute http(s) URL (it would end up in a header)
 */
export function contentSecurityPolicy(connectSources: readonly string[] = []): string {
  const origins = connectSources.map((source) => {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new Error(`connectSources: "${source}" is not an absolute URL (e.g. https://api.example.com).`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`connectSources: "${source}" is not an http(s) URL.`);
    return url.origin;
  });
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob: https:",
    "font-src 'self' data: https:",
    "media-src 'self' data: blob: https:",
    ['connect-src', "'self'", ...new Set(origins)].join(' '),
    "worker-src 'self'",
    'frame-src https:',
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Vite's default asset names: `assets/<name>-<8+ char hash>.<ext>`. */
const HASHED_ASSET = /^assets\/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

/** Why a request path is refused: a traversal attempt or a name we never serve. */
function unsafe(segments: readonly string[]): boolean {
  return segments.some((s) => s === '..' || s.startsWith('.') || s.includes('\\') || s.includes('\0'));
}

interface Found {
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * Koa middleware serving `root` for GET and HEAD, mounted after the API routes; requests it does
 * not serve go on to `next()`.
 * @throws HttpError `NOT_FOUND` (404) for a refused path, never falling back to `index.html` for it
 */
export function staticFiles(options: StaticFilesOptions): Middleware {
  const root = resolve(options.root);
  const reserved = options.reservedPrefixes ?? ['/api/'];
  const mount = options.mountPath ?? '';
  const policy = contentSecurityPolicy(options.connectSources);
  let realRoot: Promise<string> | undefined;

  /** The file at `relative` if it is a regular file inside the root (after symlinks), else undefined. */
  async function find(relative: string): Promise<Found | undefined> {
    const candidate = join(root, relative);
    if (candidate !== root && !candidate.startsWith(root + sep)) return undefined;
    try {
      const real = await realpath(candidate);
      realRoot ??= realpath(root);
      const base = await realRoot;
      if (!real.startsWith(base + sep)) return undefined;
      const info = await stat(real);
      return info.isFile() ? { path: real, size: info.size, mtimeMs: info.mtimeMs } : undefined;
    } catch {
      return undefined;
    }
  }

  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 404 || ctx.body != null) return next();
    if (mount !== '' && ctx.path === mount) {
      ctx.status = 301;
      ctx.redirect(`${mount}/${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`);
      return;
    }
    if (mount !== '' && !ctx.path.startsWith(`${mount}/`)) return next();
    const rawPath = ctx.path.slice(mount.length);
    if (reserved.some((prefix) => ctx.path.startsWith(prefix) || ctx.path === prefix.replace(/\/$/, ''))) return next();

    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      throw new HttpError('NOT_FOUND', 'No such file.');
    }
    const segments = decoded.split('/').filter((s) => s !== '');
    if (unsafe(segments)) throw new HttpError('NOT_FOUND', 'No such file.');

    const relative = segments.join('/');
    let found = relative === '' ? await find('index.html') : await find(relative);
    let isFallback = false;
    if (found === undefined) {
      const last = segments[segments.length - 1] ?? '';
      // An app route (no extension): the app's index.html, which routes on the client.
      if (last.includes('.')) return next();
      found = await find('index.html');
      isFallback = true;
      if (found === undefined) return next();
    }

    const ext = extname(found.path).toLowerCase();
    const type = CONTENT_TYPES[ext] ?? 'application/octet-stream';
    ctx.status = 200;
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', policy);
    ctx.set('Referrer-Policy', REFERRER_POLICY);
    ctx.set('Cache-Control', ext === '.html' ? NO_STORE : !isFallback && HASHED_ASSET.test(relative) ? IMMUTABLE : REVALIDATE);
    ctx.set('Last-Modified', new Date(found.mtimeMs).toUTCString());
    ctx.set('ETag', `W/"${found.size.toString(16)}-${Math.floor(found.mtimeMs).toString(16)}"`);
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    if (ctx.method === 'HEAD') {
      // No stream to open; a null body would make Koa answer 204 without the type, so set them after.
      ctx.body = null;
      ctx.status = 200;
    } else {
      ctx.body = createReadStream(found.path);
    }
    ctx.set('Content-Type', type);
    ctx.length = found.size;
  };
}

/**
 * The address to open in a browser for a server listening on `url`: a wildcard address
 * (`0.0.0.0`, `[::]`) becomes the loopback one. No trailing slash.
 */
export function browserUrl(url: string): string {
  return url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:').replace(/\/+$/, '');
}
