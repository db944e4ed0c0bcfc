import { describe, expect, it } from 'vitest';
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
