import { describe, expect, it } from 'vitest';
import { countryFlag, countryName } from './country.js';

describe('countryFlag(code)', () => {
  it('spells a code in regional indicator symbols', () => {
    expect(countryFlag('GB')).toBe('\u{1F1EC}\u{1F1E7}');
    expect(countryFlag('US')).toBe('🇺🇸');
  });

  it.each(['', 'gb', 'GBR', 'G1', '(unknown)'])('is empty for %j, which is no code', (value) => {
    expect(countryFlag(value)).toBe('');
  });
});

describe('countryName(code)', () => {
  it('names a code in English', () => {
    expect(countryName('GB')).toBe('United Kingdom');
    expect(countryName('DE')).toBe('Germany');
  });

  it('gives back a value it cannot name', () => {
    expect(countryName('gb')).toBe('gb');
    expect(countryName('(none)')).toBe('(none)');
  });
});
