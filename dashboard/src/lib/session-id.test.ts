import { describe, expect, it } from 'vitest';
import { shortSessionId } from './session-id.js';

describe('shortSessionId(id)', () => {
  it('shows the random tail of a UUIDv7, not the shared time prefix', () => {
    expect(shortSessionId('0193a1b2-c3d4-7e5f-8a6b-1c2d3e4f5a6b')).toBe('1c2d3e4f5a6b');
    expect(shortSessionId('0193a1b2-c3d4-7e5f-8a6b-ffffffffffff')).not.toBe(shortSessionId('0193a1b2-c3d4-7e5f-8a6b-1c2d3e4f5a6b'));
  });
  it('keeps short ids and ends long other ids', () => {
    expect(shortSessionId('s-1')).toBe('s-1');
    expect(shortSessionId('session_abcdefghijklmnop')).toBe('…efghijklmnop');
    expect(shortSessionId(null)).toBe('—');
  });
});
