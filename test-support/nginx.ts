import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where Debian's `nginx` package puts the binary (`scripts/ensure-system-deps.sh` installs it). */
export const NGINX_BINARY = process.env.NGINX_BINARY ?? '/usr/sbin/nginx';

/** A real nginx on 127.0.0.1 and an ephemeral port, in front of one upstream. */
export interface Nginx {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** A port free right now on 127.0.0.1 (nginx cannot be told to pick one). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => (socket.end(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 10 s: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts nginx in the foreground with `location / { <locationBody> }` in front of the caller's
 * upstream; its files (configuration, pid, temporary bodies, logs) live in a temporary directory.
 * @param locationBody - e.g. `proxy_pass http://127.0.0.1:8787;` (nginx's defaults otherwise)
 */
export function startNginx(locationBody: string): Promise<Nginx> {
  return startNginxWith((port) => `server {
    listen 127.0.0.1:${port};
    server_name _;
    location / { ${locationBody} }
  }`);
}

/**
 * Starts nginx with a whole `server { … }` block of the caller's (a recipe of docs/deploy.md, its
 * `listen` made `127.0.0.1:<port>` by `serverBlock`), in the same throw-away setting.
 */
export async function startNginxWith(serverBlock: (port: number) => string): Promise<Nginx> {
  if (!existsSync(NGINX_BINARY)) throw new Error(`No nginx at ${NGINX_BINARY}: run scripts/ensure-system-deps.sh (as root) or apt-get install nginx.`);
  const dir = mkdtempSync(join(tmpdir(), 'sa-nginx-'));
  const port = await freePort();
  const config = `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${serverBlock(port)}
}
`;
  writeFileSync(join(dir, 'nginx.conf'), config);
  const child = spawn(NGINX_BINARY, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  await waitForPort(port, child, () => output);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGQUIT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An answer of {@link requestFrom}. */
export interface PlainResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP/1.1 request (or HTTPS, trusting `ca`) whose connection leaves from `localAddress` (any
 * of 127.0.0.0/8 on Linux), so a test can be a client that is not the proxy's own address.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; ca?: string } = {},
): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const options = { method: init.method ?? 'GET', headers: init.headers, localAddress, agent: false as const };
    const send = url.startsWith('https:') ? (cb: Parameters<typeof request>[2]) => httpsRequest(url, { ...options, ca: init.ca }, cb) : (cb: Parameters<typeof request>[2]) => request(url, options, cb);
    const req = send((res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
