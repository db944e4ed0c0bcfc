import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { createMetrics } from '../metrics.js';
import { StoreError } from '../store/store-error.js';
import { errorHandler } from './error-handler.js';

describe('errorHandler(logger, metrics)', () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(errorHandler(silentLogger, createMetrics()));
    app.use((ctx) => {
      if (ctx.path === '/busy') throw new StoreError('BUSY', 'The database did not answer this read within its budget of 15000 ms; retry later.');
      if (ctx.path === '/busy-continues') throw new StoreError('BUSY', 'The database did not answer this read within its budget of 15000 ms; retry later.', { continues: true });
      if (ctx.path === '/broken') throw new Error('disk on fire');
      ctx.body = { ok: true };
    });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close?.());

  it('answers a read past its budget (StoreError BUSY) 503 STORAGE_UNAVAILABLE with Retry-After, its message public', async () => {
    const res = await fetch(`${url}/busy`);
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
      503,
      '5',
      { error: 'The database did not answer this read within its budget of 15000 ms; retry later.', code: 'STORAGE_UNAVAILABLE' },
    ]);
  });

  it('says when the read goes on, so that the same request asked again gets its answer', async () => {
    const res = await fetch(`${url}/busy-continues`);
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
      503,
      '5',
      { error: 'The database did not answer this read within its budget of 15000 ms; retry later.', code: 'STORAGE_UNAVAILABLE', continues: true },
    ]);
  });

  it('keeps any other failure a generic 500', async () => {
    const res = await fetch(`${url}/broken`);
    expect([res.status, await res.json()]).toEqual([500, { error: 'Internal server error.', code: 'INTERNAL_ERROR' }]);
  });
});
