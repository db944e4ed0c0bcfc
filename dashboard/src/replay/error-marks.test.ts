import { describe, expect, it } from 'vitest';
import type { WireEvent } from '../api/wire-types.js';
import { errorMarks } from './error-marks.js';

const START = Date.UTC(2026, 0, 5, 10);
const event = (id: string, type: string, at: number | null, properties: WireEvent['properties'] = {}): WireEvent => ({
  event_id: id,
  event_type: type,
  user_id: null,
  session_id: 's',
  timestamp: at === null ? null : new Date(START + at).toISOString(),
  received_at: null,
  properties,
  user_agent: null,
});

describe('errorMarks(events, start, totalMs)', () => {
  it('marks the error events within the recording, in time order, with their messages', () => {
    const events = [
      event('e3', 'error', 6000, { message: 'Error: payment failed' }),
      event('c1', 'click', 1000),
      event('e1', 'error', 2000, { message: 'TypeError: total is undefined' }),
      event('e2', 'error', 4000, { message: '' }),
      event('e0', 'error', -1, { message: 'before the recording' }),
      event('e9', 'error', 9001, { message: 'after it' }),
      event('en', 'error', null, { message: 'no time' }),
    ];
    expect(errorMarks(events, START, 9000)).toEqual([
      { offset: 2000, message: 'TypeError: total is undefined', id: 'e1' },
      { offset: 4000, message: '(no message)', id: 'e2' },
      { offset: 6000, message: 'Error: payment failed', id: 'e3' },
    ]);
  });
});
