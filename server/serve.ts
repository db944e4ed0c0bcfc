import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppOptions, type AnalyticsApp, createApp } from './app.js';
import type { Logger } from './logger.js';
import { pruneOlderThanDays } from './retention.js';
import type { EventStore } from './store/event-store.js';

/** Options of {@link serve}. */
export interface ServeOptions extends Omit<AppOptions, 'store' | 'logger'> {
  store: EventStore;
  logger: Logger;
  port: number;
  host: string;
  /** Delete events and recordings older than this many days, at start and hourly. */
  retentionDays?: number;
  /** How long shutdown waits for in-flight requests before cutting connections, ms. @default 10000 */
  shutdownGraceMs?: number;
}

/** True for a listening address that only this machine reaches. */
function isLoopbackHostName(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** A running server. */
export interface RunningServer {
  app: AnalyticsApp;
  server: Server;
  /** The address it listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /**
   * Stops accepting, lets in-flight requests finish (up to the grace period), commits what was
   * accepted and closes the database.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server on a store that is already initialised.
 * @throws Error for demo mode on an address other machines reach, or behind a trusted proxy: the
 *   demo hands out keys to loopback clients, which a proxy or a public address would turn into anyone
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { store, logger } = options;
  if (options.demo !== undefined && !isLoopbackHostName(options.host)) {
    throw new Error(`Demo mode hands out the demo project's keys, so it listens on loopback only (--host 127.0.0.1), not on ${options.host}.`);
  }
  if (options.demo !== undefined && options.trustProxy !== undefined && options.trustProxy !== false) {
    throw new Error('Demo mode hands out the demo project\'s keys to loopback clients, so it does not run behind a proxy: drop --demo or --trust-proxy.');
  }
  const app = createApp(options);
  const handle = app.callback();
  // Answers not yet sent, so that shutdown can ask their clients to leave (see close()).
  const unanswered = new Set<ServerResponse>();
  let draining = false;
  const server = createServer((req, res) => {
    if (draining) {
      // Shutting down: this answer closes its connection, so keep-alive clients move on.
      res.setHeader('Connection', 'close');
    } else {
      unanswered.add(res);
      res.once('close', () => unanswered.delete(res));
    }
    void handle(req, res);
  });
  // Keep-alive sockets past the load balancer's idle time are a common source of 502s; stay above it.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      // What the CLI prints as it is: name the address and the setting that changes it.
      if (error.code === 'EADDRINUSE') {
        reject(new Error(`Port ${options.port} on ${options.host} is in use: stop what listens there, or choose another port (--port N, SA_PORT).`, { cause: error }));
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'EACCES') {
        reject(new Error(`Cannot listen on ${options.host}:${options.port} (${error.code}): choose another address or port (--host, --port; SA_HOST, SA_PORT).`, { cause: error }));
      } else reject(error);
    });
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  // A quiet server still deletes yesterday's visitor salt soon after midnight (visitor-id.ts).
  const saltTimer = setInterval(() => app.expireVisitorSalts(), 5 * 60_000).unref();

  let retentionTimer: NodeJS.Timeout | undefined;
  if (options.retentionDays !== undefined) {
    const days = options.retentionDays;
    const prune = (): void => {
      pruneOlderThanDays(store, days, Date.now()).then(
        (n) => logger.info('retention', { days, cutoff: new Date(n.cutoff).toISOString(), events: n.events, chunks: n.chunks }),
        (error: unknown) => logger.error('retention failed', { error: String(error) }),
      );
    };
    prune();
    retentionTimer = setInterval(prune, 3_600_000).unref();
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(retentionTimer);
      clearInterval(saltTimer);
      // Without this, busy keep-alive connections would keep bringing new requests until the
      // grace period cuts them: every answer from now on ends its connection instead.
      draining = true;
      for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
      await closed;
      clearTimeout(grace);
      await app.drain();
      await app.close();
      await store.close();
    })();
    return closing;
  };

  return { app, server, url, close };
}
