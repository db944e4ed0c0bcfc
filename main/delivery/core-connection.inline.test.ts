/** The inline-worker start: the built worker's source from a lazily imported chunk, run from a Blob URL. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import type { Analytics } from '../analytics.js';
import { createAnalytics } from '../create-analytics.js';
import { fakeWorkers } from '../../test-support/client/facade-fakes.js';

vi.mock('./inline-worker-source.js', () => ({ WORKER_SOURCE: '/* the built worker */' }));

const clients: Analytics[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('the inline-worker start', () => {
  it('starts a classic worker from a Blob URL of the inline source and revokes the URL', async () => {
    const revoke = vi.spyOn(URL, 'revokeObjectURL');
    const workers = fakeWorkers(['ok'], [createFakeFetch()]);
    const createWorker = vi.fn(workers.createWorker);
    const analytics = createAnalytics({
      apiKey: 'k',
      projectId: 'p',
      enableAutoPageTracking: false,
      transport: { strategies: ['inline-worker', 'in-process'], createWorker },
    });
    clients.push(analytics);
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', strategy: 'inline-worker' });
    const [url, options] = createWorker.mock.calls[0]!;
    expect(String(url)).toMatch(/^blob:/);
    expect(options).toEqual({});
    expect(revoke).toHaveBeenCalledWith(url);
  });
});
