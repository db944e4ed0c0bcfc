/**
 * A TCP proxy in front of the analytics server that a test can take down and bring back on the same
 * port: "down" stops listening and cuts every open connection, so the browser sees the server as
 * gone (connection refused, or reset for a keep-alive socket); "up" listens again and forwards.
 * The server behind it, and its database, keep running throughout.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface SwitchableProxy {
  /** Origin of the proxy, e.g. `http://127.0.0.1:41234`; the same while down. */
  readonly url: string;
  readonly isUp: boolean;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Stops listening and cuts every open connection. */
  down(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (an `http://host:port` origin); `startDown` starts it refusing. */
export async function startSwitchableProxy(target: string, options: { startDown?: boolean } = {}): Promise<SwitchableProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  let connections = 0;
  let server: Server | undefined;

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  async function listen(port: number): Promise<number> {
    const next = createServer((client) => {
      connections++;
      track(client);
      const upstream = connect(Number(targetPort), hostname);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
    return (next.address() as AddressInfo).port;
  }

  async function stop(): Promise<void> {
    const current = server;
    server = undefined;
    const closed = current === undefined ? Promise.resolve() : new Promise<void>((resolve) => current.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  }

  const port = await listen(0);
  if (options.startDown === true) await stop();

  return {
    url: `http://127.0.0.1:${port}`,
    get isUp() {
      return server !== undefined;
    },
    get connections() {
      return connections;
    },
    async up() {
      if (server === undefined) await listen(port);
    },
    down: stop,
    close: stop,
  };
}
