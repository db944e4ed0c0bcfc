import { describe, expect, it } from 'vitest';
import { DEFAULTS, FALLBACK_ENDPOINT, resolveConfig, toDeliveryConfig } from './config.js';

describe('resolveConfig(config, base)', () => {
  const base = 'https://shop.example/some/page?x=1';

  it('applies every default', () => {
    expect(resolveConfig({ apiKey: 'k', projectId: 'p' }, base)).toEqual({
      apiKey: 'k',
      projectId: 'p',
      endpoint: 'https://shop.example',
      ...DEFAULTS,
    });
  });

  it('keeps valid values, including 0 retries and 0 delay', () => {
    const resolved = resolveConfig({ apiKey: 'k', projectId: 'p', retryAttempts: 0, retryDelay: 0, batchSize: 5.7, debug: true }, base);
    expect(resolved).toMatchObject({ retryAttempts: 0, retryDelay: 0, batchSize: 5, debug: true });
  });

  it('replaces values of the wrong type or out of range with the default', () => {
    const resolved = resolveConfig(
      {
        apiKey: 'k',
        projectId: 'p',
        batchSize: 0,
        maxQueueSize: -1,
        flushInterval: Number.POSITIVE_INFINITY,
        sessionTimeout: '100' as unknown as number,
        debug: 'yes' as unknown as boolean,
        retryAttempts: 0.5,
      },
      base,
    );
    expect(resolved).toMatchObject({
      batchSize: 20,
      maxQueueSize: 1000,
      flushInterval: 10_000,
      sessionTimeout: 1_800_000,
      debug: false,
      retryAttempts: 0,
    });
  });

  it('resolves the endpoint against the page, or the fallback without one', () => {
    expect(resolveConfig({ apiKey: 'k', projectId: 'p', endpoint: '/api/' }, base).endpoint).toBe('https://shop.example/api');
    expect(resolveConfig({ apiKey: 'k', projectId: 'p' }).endpoint).toBe(FALLBACK_ENDPOINT);
  });

  it('gives the delivery core plain data only', () => {
    const delivery = toDeliveryConfig(resolveConfig({ apiKey: 'k', projectId: 'p', onDiscard: () => {} }, base));
    expect(() => structuredClone(delivery)).not.toThrow();
    expect(Object.keys(delivery).sort()).toEqual(
      ['apiKey', 'batchSize', 'compress', 'debug', 'discardAfterRetries', 'endpoint', 'flushInterval', 'maxQueueSize', 'persistQueue', 'projectId', 'retryAttempts', 'retryDelay'],
    );
  });
});
