import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import { createHttpTransport } from './http-transport.js';

/*
 * What the HTTP transport sends and how it reads the answers, against a stand-in on 127.0.0.1 that
 * records requests and answers as ClickHouse's HTTP interface does. The engine's side of the same
 * statements is tested on chDB, and over a real server with CLICKHOUSE_URL (`clickhouse-http.test.ts`).
 */

interface Seen {
  params: URLSearchParams;
  body: string;
}

describe('createHttpTransport({ url })', () => {
  const seen: Seen[] = [];
  let answer: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: '' };
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ params: new URL(request.url ?? '/', 'http://x').searchParams, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer.status, { 'Content-Type': 'text/plain', ...answer.headers });
      response.end(answer.body);
    });
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('binds values as query parameters, reads JSONEachRow rows and asks for numbers as numbers', async () => {
    const transport = createHttpTransport({ url });
    try {
      seen.length = 0;
      answer = { status: 200, body: '{"n":3,"s":"a"}\n{"n":4,"s":null}\n' };
      const rows = await transport.query('SELECT n, s FROM t WHERE p = {p:String} AND id IN {ids:Array(String)}', { p: "it's", ids: ['a', 'b'] });
      expect(rows).toEqual([
        { n: 3, s: 'a' },
        { n: 4, s: null },
      ]);
      const [request] = seen;
      expect(request?.body).toContain('SELECT n, s FROM t WHERE p = {p:String}');
      expect(request?.body).toContain('FORMAT JSONEachRow');
      // Parameter values travel in ClickHouse's escaped text form, which the server reads back.
      expect(request?.params.get('param_p')).toBe("it\\'s");
      expect(request?.params.get('param_ids')).toBe("['a','b']");
      expect(request?.params.get('output_format_json_quote_64bit_integers')).toBe('0');
    } finally {
      await transport.close();
    }
  });

  it('inserts JSONEachRow synchronously, and waits for the end of a command', async () => {
    const transport = createHttpTransport({ url });
    try {
      seen.length = 0;
      answer = { status: 200, body: '' };
      await transport.insert('db.events', [{ a: 1, b: 'x' }, { a: 2, b: null }]);
      await transport.insert('db.events', []);
      await transport.command('DELETE FROM db.events WHERE a = {a:Int64}', { a: 1 });
      expect(seen).toHaveLength(2);
      const [insert, command] = seen;
      expect(insert?.params.get('query')).toMatch(/^INSERT INTO db\.events\s+FORMAT JSONEachRow/);
      expect(insert?.params.get('async_insert')).toBe('0');
      expect(insert?.body.trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([{ a: 1, b: 'x' }, { a: 2, b: null }]);
      expect(command?.body).toBe('DELETE FROM db.events WHERE a = {a:Int64}');
      expect(command?.params.get('wait_end_of_query')).toBe('1');
      expect(command?.params.get('param_a')).toBe('1');
    } finally {
      await transport.close();
    }
  });

  it("rejects with the server's error when ClickHouse refuses a statement", async () => {
    const transport = createHttpTransport({ url });
    try {
      answer = {
        status: 500,
        body: 'Code: 60. DB::Exception: Unknown table expression identifier \'nope\'. (UNKNOWN_TABLE) (version 25.3.1.1)',
        headers: { 'X-ClickHouse-Exception-Code': '60' },
      };
      await expect(transport.query('SELECT 1 FROM nope')).rejects.toThrow(/Unknown table/);
    } finally {
      await transport.close();
    }
  });

  it('is what openStore opens with clickhouseUrl: the database from the path, the configuration in the location', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clickhouse-open-'));
    const store = openStore(join(dir, 'config.db'), { clickhouseUrl: `${url}/analytics` });
    try {
      expect(store.kind).toBe('clickhouse');
      seen.length = 0;
      answer = { status: 200, body: '' };
      await store.init();
      expect(seen[0]?.body).toBe('CREATE DATABASE IF NOT EXISTS analytics');
      expect(seen.some((request) => request.body.includes('CREATE TABLE IF NOT EXISTS analytics.events'))).toBe(true);
      // The path is no default database of the connection: it does not exist before the first statement.
      expect(seen.every((request) => !request.params.has('database'))).toBe(true);
      expect(await store.listProjects()).toEqual([]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
