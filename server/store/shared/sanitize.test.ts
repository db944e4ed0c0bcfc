import { describe, expect, it } from 'vitest';
import { cleanJson, cleanText } from './sanitize.js';

describe('cleanText(value)', () => {
  it('returns clean strings unchanged and replaces NUL and lone surrogates with U+FFFD', () => {
    const clean = 'plain 😀 text';
    expect(cleanText(clean)).toBe(clean);
    expect(cleanText('a\u0000b\ud800c\udfffd')).toBe('a\uFFFDb\uFFFDc\uFFFDd');
  });
});

describe('cleanJson(json)', () => {
  it('replaces NUL and lone-surrogate escapes, but not an escaped backslash followed by "u0000"', () => {
    const value = { nul: 'a\u0000b', lone: 'x\ud83dy', text: '\\u0000', both: '\\\u0000', pair: '😀', ctrl: '\u0001' };
    expect(JSON.parse(cleanJson(JSON.stringify(value)))).toEqual({
      nul: 'a\uFFFDb',
      lone: 'x\uFFFDy',
      text: '\\u0000',
      both: '\\\uFFFD',
      pair: '😀',
      ctrl: '\u0001',
    });
  });
});
