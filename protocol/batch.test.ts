import { describe, expect, it } from 'vitest';
import { checkBatch } from './batch.js';

describe('checkBatch(body)', () => {
  it('refuses a body that is not an array', () => {
    expect(checkBatch({ events: [] })).toMatchObject({ ok: false, code: 'INVALID_BATCH' });
  });

  it('refuses more events than allowed as too large', () => {
    expect(checkBatch([{ event_type: 'a' }, { event_type: 'b' }], 1)).toMatchObject({ ok: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('keeps valid events in order and lists invalid ones by index', () => {
    const result = checkBatch([{ event_type: 'a' }, 3, { event_type: 'b' }, { event_type: '' }]);
    expect(result).toMatchObject({
      ok: true,
      events: [{ event_type: 'a' }, { event_type: 'b' }],
      rejected: [{ index: 1 }, { index: 3 }],
    });
  });

  it('parses each kept event\'s timestamp once and hands it to the caller\'s rule and the result', () => {
    const seen: Array<number | null> = [];
    const result = checkBatch(
      [
        { event_type: 'a', timestamp: '2026-11-22T10:00:00.000Z' },
        { event_type: 'b' },
        { event_type: 'c', timestamp: '2026-02-31T10:00:00.000Z' },
        { event_type: 'd', timestamp: '2026-11-22T11:00:00.250+01:00' },
        { event_type: 'e', timestamp: '2000-01-01T00:00:00Z' },
      ],
      10,
      (_event, time) => {
        seen.push(time);
        return time !== null && time < Date.UTC(2001, 0, 1) ? 'too old' : null;
      },
    );
    const t = Date.UTC(2026, 10, 22, 10);
    expect(seen).toEqual([t, null, t + 250, Date.UTC(2000, 0, 1)]);
    expect(result).toMatchObject({
      ok: true,
      events: [{ event_type: 'a' }, { event_type: 'b' }, { event_type: 'd' }],
      times: [t, null, t + 250],
      rejected: [{ index: 2 }, { index: 4, error: 'too old' }],
    });
  });
});
