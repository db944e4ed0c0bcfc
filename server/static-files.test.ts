import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMMUTABLE, NO_STORE, REFERRER_POLICY, REVALIDATE, browserUrl, contentSecurityPolicy } from './static-files.js';
import { type TestServer, startTestServer } from '../test-support/server/test-server.js';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with the path sent exactly as given (fetch would normalise `..` away). */
function raw(base: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const INDEX = '<!doctype html><title>the app</title><div id="root"></div>';
const SECRET = 'top-secret-outside-the-root';

describe('staticFiles (start --serve-example)', () => {
  let dir: string;
  let server: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sa-static-'));
    const root = join(dir, 'site');
    mkdirSync(join(root, 'assets'), { recursive: true });
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'index.html'), INDEX);
    writeFileSync(join(root, 'assets', 'index-AbC_d-12.js'), 'console.log("app")');
    writeFileSync(join(root, 'assets', 'index-Zx9Yw8Vu.css'), 'body{}');
    writeFileSync(join(root, 'robots.txt'), 'User-agent: *');
    writeFileSync(join(root, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(root, 'data.bin'), 'binary');
    writeFileSync(join(root, '.env'), SECRET);
    writeFileSync(join(dir, 'secret.txt'), SECRET);
    symlinkSync(join(dir, 'secret.txt'), join(root, 'link.txt'));
    server = await startTestServer('sqlite', { staticFiles: { root } });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / with an HTML type, never stored, nosniff', async () => {
    for (const path of ['/', '/index.html']) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toBe(INDEX);
      expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control'], path).toBe(NO_STORE);
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['access-control-allow-origin'], path).toBeUndefined();
    }
  });

  it('answers every file, the SPA fallback and a 304 with the policy, nosniff and same-origin referrers', async () => {
    const etag = String((await raw(server.url, '/robots.txt')).headers.etag);
    const answers = [
      await raw(server.url, '/'),
      await raw(server.url, '/replay/some-session'),
      await raw(server.url, '/assets/index-AbC_d-12.js'),
      await raw(server.url, '/assets/index-Zx9Yw8Vu.css'),
      await raw(server.url, '/logo.svg'),
      await raw(server.url, '/robots.txt', { headers: { 'if-none-match': etag } }),
      await raw(server.url, '/robots.txt', { method: 'HEAD' }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 304, 200]);
    for (const res of answers) {
      expect(res.headers['content-security-policy']).toBe(contentSecurityPolicy());
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe(REFERRER_POLICY);
    }
  });

  it('answers each file with the content type of its extension', async () => {
    const types: Record<string, string> = {
      '/assets/index-AbC_d-12.js': 'text/javascript; charset=utf-8',
      '/assets/index-Zx9Yw8Vu.css': 'text/css; charset=utf-8',
      '/robots.txt': 'text/plain; charset=utf-8',
      '/logo.svg': 'image/svg+xml',
      '/data.bin': 'application/octet-stream',
    };
    for (const [path, type] of Object.entries(types)) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type'], path).toBe(type);
    }
  });

  it('caches hashed assets for a year as immutable, and revalidates everything else', async () => {
    expect((await raw(server.url, '/assets/index-AbC_d-12.js')).headers['cache-control']).toBe(IMMUTABLE);
    expect((await raw(server.url, '/robots.txt')).headers['cache-control']).toBe(REVALIDATE);
  });

  it('answers a matching ETag with 304', async () => {
    const first = await raw(server.url, '/robots.txt');
    const etag = String(first.headers.etag);
    const again = await raw(server.url, '/robots.txt', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const res = await raw(server.url, '/robots.txt', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['content-length']).toBe(String('User-agent: *'.length));
    expect(res.body).toBe('');
  });

  it('falls back to index.html for app routes (paths without an extension), never stored', async () => {
    for (const path of ['/events', '/replay', '/replay/some-session', '/docs', '/demo?tab=1']) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toBe(INDEX);
      expect(res.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control'], path).toBe(NO_STORE);
    }
  });

  it('answers a missing file with an extension with a JSON 404, not the app', async () => {
    const res = await raw(server.url, '/assets/missing-AbCdEf12.js');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('never serves /api/ paths from files: a wrong API address stays a JSON 404', async () => {
    const res = await raw(server.url, '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('keeps the API routes working', async () => {
    const res = await raw(server.url, '/healthz');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
  });

  it('refuses directory traversal, encoded or not, dotfiles and symlinks out of the root, with 404 and never the app', async () => {
    const attempts = [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E%2Fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/..%5csecret.txt',
      '/%2e%2e%5csecret.txt',
      '/index.html%00.js',
      '/.env',
      '/%2eenv',
      '/link.txt',
      '/%E0%A4%A',
    ];
    for (const path of attempts) {
      const res = await raw(server.url, path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).not.toContain(SECRET);
      expect(res.body, path).not.toContain('the app');
    }
  });

  it('ignores other methods', async () => {
    const res = await raw(server.url, '/', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('the app');
  });
});

describe('a server without staticFiles', () => {
  it('serves no files at /', async () => {
    const server = await startTestServer('sqlite');
    try {
      const res = await raw(server.url, '/');
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await server.close();
    }
  });
});

describe('contentSecurityPolicy(connectSources)', () => {
  it('allows only the own origin, no inline script, no plugins, no framing', () => {
    expect(contentSecurityPolicy()).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob: https:; font-src 'self' data: https:; media-src 'self' data: blob: https:; connect-src 'self'; " +
        "worker-src 'self'; frame-src https:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  it('adds the origins of connectSources to connect-src only, once each', () => {
    const policy = contentSecurityPolicy(['https://api.example.com/v1/', 'http://127.0.0.1:8787', 'https://api.example.com']);
    expect(policy).toContain("; connect-src 'self' https://api.example.com http://127.0.0.1:8787; ");
    expect(policy.replace(/connect-src [^;]*/, '')).toBe(contentSecurityPolicy().replace(/connect-src [^;]*/, ''));
  });

  it.each(['api.example.com', '/api', 'javascript:alert(1)', "https://a.example; script-src 'unsafe-inline'", ''])('refuses %j', (source) => {
    expect(() => contentSecurityPolicy([source])).toThrow(/connectSources/);
  });

  it('reaches the answers of a server given connectSources', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-static-connect-'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    const server = await startTestServer('sqlite', { staticFiles: { root: dir, connectSources: ['https://api.example.com'] } });
    try {
      expect((await raw(server.url, '/')).headers['content-security-policy']).toBe(contentSecurityPolicy(['https://api.example.com']));
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('browserUrl(url)', () => {
  it('turns a wildcard address into a loopback one', () => {
    expect(browserUrl('http://0.0.0.0:8787')).toBe('http://127.0.0.1:8787');
    expect(browserUrl('http://[::]:8787/')).toBe('http://[::1]:8787');
    expect(browserUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
  });
});

describe('the dashboard (createApp({ dashboard }), start --dashboard)', () => {
  let dir: string;
  const servers: TestServer[] = [];
  const DASHBOARD = '<!doctype html><title>dashboard</title><div id="root"></div>';
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sa-dashboard-'));
    mkdirSync(join(dir, 'dashboard', 'assets'), { recursive: true });
    mkdirSync(join(dir, 'example'));
    writeFileSync(join(dir, 'dashboard', 'index.html'), DASHBOARD);
    writeFileSync(join(dir, 'dashboard', 'assets', 'index-AbCdEf12.js'), 'console.log("dashboard")');
    writeFileSync(join(dir, 'example', 'index.html'), INDEX);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (options: Parameters<typeof startTestServer>[1]): Promise<TestServer> => {
    const server = await startTestServer('sqlite', options);
    servers.push(server);
    return server;
  };

  it('is served at /dashboard/ (hashed assets immutable), /dashboard redirects to it, and / too without an example app', async () => {
    const server = await start({ dashboard: { root: join(dir, 'dashboard') } });
    const page = await raw(server.url, '/dashboard/');
    expect(page.body).toBe(DASHBOARD);
    for (const path of ['/dashboard/', '/dashboard/index.html', '/dashboard/sessions']) {
      const res = await raw(server.url, path);
      expect([res.status, res.headers['cache-control'], res.headers['content-security-policy'], res.headers['x-content-type-options'], res.headers['referrer-policy']], path).toEqual([
        200,
        NO_STORE,
        contentSecurityPolicy(),
        'nosniff',
        REFERRER_POLICY,
      ]);
    }
    const asset = await raw(server.url, '/dashboard/assets/index-AbCdEf12.js');
    expect(asset.headers['cache-control']).toBe(IMMUTABLE);
    expect(asset.headers['content-security-policy']).toBe(contentSecurityPolicy());
    const bare = await raw(server.url, '/dashboard');
    expect([bare.status, bare.headers.location]).toEqual([301, '/dashboard/']);
    const root = await raw(server.url, '/');
    expect([root.status, root.headers.location]).toEqual([302, '/dashboard/']);
    expect((await raw(server.url, '/healthz')).status).toBe(200);
    expect((await raw(server.url, '/api/v1/nope')).headers['content-type']).toContain('application/json');
  });

  it('sits under the base path beside an example app at /', async () => {
    const server = await start({ basePath: '/stats', dashboard: { root: join(dir, 'dashboard') }, staticFiles: { root: join(dir, 'example') } });
    expect((await raw(server.url, '/stats/dashboard/')).body).toBe(DASHBOARD);
    expect((await raw(server.url, '/')).body).toBe(INDEX);
    expect((await raw(server.url, '/dashboard/')).body).toBe(INDEX);
    const api = await raw(server.url, '/stats/api/v1/events');
    expect(api.status).toBe(401);
  });
});
