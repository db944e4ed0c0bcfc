import { describe, expect, it } from 'vitest';
import { MAX_MASKED_VALUES, createMaskedValues } from './masked-values.js';

describe('createMaskedValues()', () => {
  it('replaces every noted value in a text by as many *', () => {
    const masked = createMaskedValues();
    masked.note('hunter2-secret');
    expect(masked.redact('the password is hunter2-secret, again hunter2-secret')).toBe(`the password is ${'*'.repeat(14)}, again ${'*'.repeat(14)}`);
  });

  it('redacts a value before its prefixes, so typing noted keystroke by keystroke still hides the whole value', () => {
    const masked = createMaskedValues();
    for (let i = 1; i <= 'pw-Secret'.length; i++) masked.note('pw-Secret'.slice(0, i));
    expect(masked.redact('typed pw-Secret')).toBe('typed *********');
  });

  it('ignores values too short to redact safely and keeps at most MAX_MASKED_VALUES, the newest', () => {
    const masked = createMaskedValues();
    masked.note('ab');
    expect(masked.redact('ab ab')).toBe('ab ab');
    for (let i = 0; i < MAX_MASKED_VALUES + 10; i++) masked.note(`value-${i}`);
    expect(masked.size).toBe(MAX_MASKED_VALUES);
    expect(masked.redact(`value-${MAX_MASKED_VALUES + 9}`)).not.toContain('value');
  });
});
