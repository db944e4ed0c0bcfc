import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiClient, queryString } from './api-client.js';
import { isNotAvailable } from './api-error.js';
import { clearCredentials, loadCredentials, saveCredentials } from './credentials.js';

describe('the API client', () => {
  it('repeats array parameters and leaves out undefined ones', () => {
    expect(queryString({ step: ['event:a', 'page:/b'], limit: 5, x: undefined })).toBe('?step=event%3Aa&step=page%3A%2Fb&limit=5');
    expect(queryString({})).toBe('');
  });
  it('sends the key in headers under the base path, never in the URL', async () => {
    const seen: Array<{ url: string; headers: Record<string, string> }> = [];
    const fake = (async (url: string, init: RequestInit) => {
      seen.push({ url, headers: init.headers as Record<string, string> });
      return new Response(JSON.stringify({ ok: 1 }), { status: 200 });
    }) as unknown as typeof fetch;
    const api = createApiClient({ credentials: { projectId: 'p1', readKey: 'sa_r_secret' }, basePath: '/stats', fetch: fake });
    await api.get('reports/live', { minutes: 5 });
    expect(seen[0]?.url).toBe('/stats/api/v1/reports/live?minutes=5');
    expect(seen[0]?.url).not.toContain('secret');
    expect(seen[0]?.headers).toMatchObject({ Authorization: 'ApiKey sa_r_secret', 'X-Project-ID': 'p1' });
  });
  describe('a GET answered 503 with Retry-After (a report past the read budget)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const busyAs = (extra: object, retryAfter = '5') => () =>
      new Response(JSON.stringify({ error: 'The database did not answer this read within its budget of 15000 ms; retry later.', code: 'STORAGE_UNAVAILABLE', ...extra }), {
        status: 503,
        headers: { 'Retry-After': retryAfter },
      });
    // SQLite's: the read goes on, and the same request asked again gets its answer.
    const busy = busyAs({ continues: true });
    const client = (answers: Array<() => Response>) => {
      const asked: number[] = [];
      const fake = (async () => {
        asked.push(Date.now());
        return (answers.shift() ?? busy)();
      }) as unknown as typeof fetch;
      return { api: createApiClient({ credentials: { projectId: 'p', readKey: 'k' }, basePath: '', fetch: fake }), asked };
    };

    it('is asked again after the seconds it says, and answers what the retry got', async () => {
      vi.useFakeTimers();
      const { api, asked } = client([busy, busy, () => new Response(JSON.stringify({ visitors: 7 }), { status: 200 })]);
      const answer = api.get<{ visitors: number }>('reports/totals');
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await answer).toEqual({ visitors: 7 });
      expect(asked.map((t) => t - (asked[0] ?? 0))).toEqual([0, 5000, 10_000]);
    });

    it('fails with the server message after three retries, and asks nothing more once aborted', async () => {
      vi.useFakeTimers();
      const given = client([]);
      const failed = given.api.get('reports/funnel').catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(15_000);
      expect(((await failed) as Error).message).toMatch(/within its budget/);
      expect(given.asked).toHaveLength(4);

      const aborted = client([]);
      const controller = new AbortController();
      const stopped = aborted.api.get('reports/funnel', {}, controller.signal).catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(1000);
      controller.abort(new Error('left the page'));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(((await stopped) as Error).message).toBe('left the page');
      expect(aborted.asked).toHaveLength(1);
    });

    it('is asked again once only when the read does not go on (PostgreSQL cancels it), and not at all for an empty Retry-After', async () => {
      vi.useFakeTimers();
      const cancelled = client([busyAs({}), busyAs({})]);
      const failed = cancelled.api.get('reports/funnel').catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(((await failed) as Error).message).toMatch(/within its budget/);
      expect(cancelled.asked).toHaveLength(2);
      const empty = client([busyAs({ continues: true }, '')]);
      expect(((await empty.api.get('reports/funnel').catch((e: unknown) => e)) as Error).message).toMatch(/within its budget/);
      expect(empty.asked).toHaveLength(1);
    });

    it('is not asked again for a change, nor for a 503 without Retry-After', async () => {
      const change = client([busy]);
      expect(((await change.api.send('POST', 'users/u1/erase').catch((e: unknown) => e)) as Error).message).toMatch(/within its budget/);
      expect(change.asked).toHaveLength(1);
      const plain = client([() => new Response(JSON.stringify({ error: 'The database is not reachable.', code: 'STORAGE_UNAVAILABLE' }), { status: 503 })]);
      expect(((await plain.api.get('reports/totals').catch((e: unknown) => e)) as Error).message).toBe('The database is not reachable.');
      expect(plain.asked).toHaveLength(1);
    });
  });
  it('turns a 404 into "not available" with the server message', async () => {
    const fake = (async () => new Response(JSON.stringify({ error: 'No route', code: 'NOT_FOUND' }), { status: 404 })) as unknown as typeof fetch;
    const api = createApiClient({ credentials: { projectId: 'p', readKey: 'k' }, basePath: '', fetch: fake });
    const error = await api.get('reports/vitals').catch((e: unknown) => e);
    expect(isNotAvailable(error)).toBe(true);
    expect((error as Error).message).toBe('No route');
  });
});

describe('credentials', () => {
  it('are kept in the given storage and forgotten on sign-out', () => {
    const storage = window.sessionStorage;
    expect(loadCredentials(storage)).toBeNull();
    saveCredentials(storage, { projectId: 'p', readKey: 'k' });
    expect(loadCredentials(storage)).toEqual({ projectId: 'p', readKey: 'k' });
    clearCredentials(storage);
    expect(loadCredentials(storage)).toBeNull();
  });
  it('ignore a malformed entry', () => {
    window.sessionStorage.setItem('service-analytics.dashboard.credentials', '{"projectId":1}');
    expect(loadCredentials(window.sessionStorage)).toBeNull();
  });
});
