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
});
