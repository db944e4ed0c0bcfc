import { describe, expect, it } from 'vitest';
import { LONG_SESSION_MS, type SessionState, createSessionMoves } from './session-moves.js';

const DAY = 86_400_000;
const state = (first: number, last: number): SessionState => [null, { first, last, events: 2, pageViews: 1 }];

describe('session moves: the midnights a session crosses', () => {
  const moves = createSessionMoves();

  it('names each midnight a span crosses by the day it starts, and what a change adds and takes away', () => {
    expect(moves.crossed(null, state(10 * DAY + 5, 10 * DAY + 9))).toEqual({ added: [], removed: [] });
    expect(moves.crossed(null, state(10 * DAY - 1, 12 * DAY))).toEqual({ added: [10, 11, 12], removed: [] });
    // A late event moves the start a day earlier; a recount shortens the end.
    expect(moves.crossed(state(10 * DAY - 1, 12 * DAY), state(8 * DAY + 1, 11 * DAY - 1))).toEqual({ added: [9], removed: [11, 12] });
    expect(moves.crossed(state(10 * DAY - 1, 12 * DAY), null)).toEqual({ added: [], removed: [10, 11, 12] });
  });

  it('keeps none for a span of LONG_SESSION_MS or more, the bound the reports read those sessions by', () => {
    const start = 100 * DAY + 1;
    expect(moves.crossed(null, state(start, start + LONG_SESSION_MS - 1)).added).toHaveLength(30);
    expect(moves.crossed(null, state(start, start + LONG_SESSION_MS))).toEqual({ added: [], removed: [] });
    expect(moves.crossed(state(start, start + LONG_SESSION_MS - 1), state(start, start + LONG_SESSION_MS)).removed).toHaveLength(30);
  });
});
