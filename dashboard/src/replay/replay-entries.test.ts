import { describe, expect, it } from 'vitest';
import { currentIndex, isFailed, replayEntries } from './replay-entries.js';

const custom = (timestamp: number, tag: string, payload: unknown) => ({ type: 5, data: { tag, payload }, timestamp });

describe('replayEntries(events)', () => {
  it('takes the console and network entries in time order, offsets from the earliest event, and leaves out what does not fit', () => {
    const events = [
      { type: 4, data: {}, timestamp: 1000 },
      custom(1800, 'service-analytics:network', { initiator: 'fetch', method: 'GET', url: 'https://a.example/x', status: 200, duration: 12 }),
      custom(1500, 'service-analytics:network', { initiator: 'xhr', method: 'POST', url: 'https://a.example/y', status: 0, error: 'network error', duration: 3 }),
      custom(1200, 'service-analytics:console', { level: 'warn', message: 'careful' }),
      custom(1300, 'service-analytics:console', { level: 'shout', message: 'not a level' }),
      custom(1400, 'service-analytics:network', { initiator: 'fetch', method: 'GET', url: 7, status: 200 }),
      custom(1100, 'service-analytics:stop', { reason: 'stop' }),
    ];
    const { console, network } = replayEntries(events);
    expect(console).toEqual([{ offset: 200, entry: { level: 'warn', message: 'careful' } }]);
    expect(network.map((n) => [n.offset, n.entry.url, isFailed(n.entry)])).toEqual([
      [500, 'https://a.example/y', true],
      [800, 'https://a.example/x', false],
    ]);
  });
});

describe('currentIndex(list, offset)', () => {
  it('finds the last entry at or before the clock', () => {
    const list = [{ offset: 100 }, { offset: 200 }, { offset: 200 }, { offset: 900 }];
    expect([0, 100, 199, 200, 899, 5000].map((t) => currentIndex(list, t))).toEqual([-1, 0, 0, 2, 2, 3]);
  });
});
