import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkClickHouseUrl, pingClickHouse, shownClickHouseUrl } from './cli-clickhouse.js';

// The CLI's runs of these (a closed port, a server that is not ClickHouse, a refused user) are in
// cli.test.ts; here what a process cannot show quickly: a server that never answers.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server on 127.0.0.1 that answers `/ping` with `body`, or never when `body` is null; its URL. */
async function listen(body: string | null): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    if (body !== null) res.end(body);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://sa:pw@127.0.0.1:${(server.address() as AddressInfo).port}/service_analytics`;
}

describe('shownClickHouseUrl(url)', () => {
  it('hides the password and keeps the rest', () => {
    expect(shownClickHouseUrl('http://sa:s3cret@db.internal:8123/events')).toBe('http://sa:***@db.internal:8123/events');
    expect(shownClickHouseUrl('https://db.internal:8443/')).toBe('https://db.internal:8443/');
  });
});

describe('checkClickHouseUrl(raw)', () => {
  it('takes http and https URLs, and names the form it expects otherwise', () => {
    expect(checkClickHouseUrl('https://sa:pw@db:8443/x')).toBe('https://sa:pw@db:8443/x');
    expect(() => checkClickHouseUrl('tcp://db:9000')).toThrow(/^must be an http:\/\/ or https:\/\/ URL/);
    expect(() => checkClickHouseUrl('db:8123')).toThrow(/^must be an http:\/\/ or https:\/\/ URL/);
    expect(() => checkClickHouseUrl('not a url')).toThrow(/^must be a URL like http:\/\//);
  });
});

describe('pingClickHouse(url, timeoutMs)', () => {
  it('resolves when /ping answers Ok.', async () => {
    await expect(pingClickHouse(await listen('Ok.\n'), 2000)).resolves.toBeUndefined();
  });

  it('gives up after the timeout when the server accepts and never answers, naming ClickHouse', async () => {
    const url = await listen(null);
    await expect(pingClickHouse(url, 200)).rejects.toThrow(/^ClickHouse at http:\/\/sa:\*\*\*@127\.0\.0\.1:\d+\/service_analytics does not answer \(no answer within 0\.2 s\)/);
  });
});
