import { describe, expect, it } from 'vitest';
import { formatClock, formatCount, formatCountOf, formatDuration, formatPercent, formatVital } from './format.js';

describe('format', () => {
  it('writes counts with separators and null as a dash', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatCount(0)).toBe('0');
    expect(formatCount(null)).toBe('—');
  });
  it('writes shares with one decimal under 10 %', () => {
    expect(formatPercent(0.4567)).toBe('46%');
    expect(formatPercent(0.0456)).toBe('4.6%');
    expect(formatPercent(0)).toBe('0%');
    expect(formatPercent(null)).toBe('—');
  });
  it('writes durations in s, m ss, h mm', () => {
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(185_000)).toBe('3m 05s');
    expect(formatDuration(3_720_000)).toBe('1h 02m');
    expect(formatDuration(null)).toBe('—');
    expect(formatClock(65_400)).toBe('1:05');
  });
  it('writes vitals in ms, s, or unitless for CLS', () => {
    expect(formatVital('lcp', 2450)).toBe('2.45 s');
    expect(formatVital('inp', 120.4)).toBe('120 ms');
    expect(formatVital('cls', 0.1)).toBe('0.100');
    expect(formatVital('fcp', null)).toBe('—');
  });
});

describe('formatCountOf(n, one, many)', () => {
  it('says one session, never "1 sessions"', () => {
    expect([formatCountOf(0, 'session', 'sessions'), formatCountOf(1, 'session', 'sessions'), formatCountOf(1234, 'session', 'sessions')]).toEqual([
      '0 sessions',
      '1 session',
      '1,234 sessions',
    ]);
  });
});
