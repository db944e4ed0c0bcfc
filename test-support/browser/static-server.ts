/**
 * A tiny static server for the browser tests and the client benchmark: the client build under
 * `/dist/client/`, and pages the tests write (HTML plus optional headers such as a CSP). It listens
 * on its own port of 127.0.0.1, so the page posts to the analytics server cross-origin, as in
 * production (CORS, preflight and the beacon form are exercised for real).
 */
import { readFile } from 'node:fs/promises';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

/** One page served at a path. */
export interface StaticPage {
  /** Full HTML document. */
  html: string;
  /** Extra response headers, e.g. `Content-Security-Policy`. */
  headers?: Record<string, string>;
}

/** A request the server answered: path and status, in order. */
export interface ServedRequest {
  path: string;
  status: number;
}

/** Options of {@link startStaticServer}. */
export interface StaticServerOptions {
  /** Directory holding the client build, served at `/dist/client/`. */
  clientDir: string;
  /** Files of the client build answered with 404 as if they were not deployed, e.g. `worker.js`. */
  missing?: readonly string[];
  /** Headers added to every response. */
  headers?: Record<string, string>;
  /** Extra routes tried before the files: return true when the request was answered. */
  handle?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

/** A running static server. */
export interface StaticServer {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Serves `page` at `path` (a path starting with `/`); replaces what was there. */
  setPage(path: string, page: StaticPage): void;
  /** Every request answered so far. */
  readonly served: readonly ServedRequest[];
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

const CLIENT_PREFIX = '/dist/client/';

/** Starts the server on 127.0.0.1 and an ephemeral port. */
export async function startStaticServer(options: StaticServerOptions): Promise<StaticServer> {
  const pages = new Map<string, StaticPage>();
  const missing = new Set(options.missing ?? []);
  const served: ServedRequest[] = [];
  const root = normalize(options.clientDir + sep);

  const server = createServer((req, res) => {
    void answer(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', String(error));
      else res.destroy();
    });
  });

  function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...options.headers, ...headers });
    res.end(body);
  }

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    res.on('finish', () => served.push({ path, status: res.statusCode }));
    if (options.handle !== undefined && (await options.handle(req, res))) return;
    const page = pages.get(path);
    if (page !== undefined) return send(res, 200, CONTENT_TYPES['.html']!, page.html, page.headers);
    if (path.startsWith(CLIENT_PREFIX)) {
      const name = decodeURIComponent(path.slice(CLIENT_PREFIX.length));
      const file = normalize(join(root, name));
      if (!missing.has(name) && file.startsWith(root)) {
        const body = await readFile(file).catch(() => undefined);
        if (body !== undefined) return send(res, 200, CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', body);
      }
    }
    send(res, 404, 'text/plain', 'not found');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setPage(path, page) {
      pages.set(path, page);
    },
    served,
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
