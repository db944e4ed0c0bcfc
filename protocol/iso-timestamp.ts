/**
 * Parses an ISO 8601 date-time with an explicit offset (`2026-11-22T10:00:00.000Z`,
 * `2026-11-22T11:00:00+01:00`, 1 to 9 fraction digits) into ms since the epoch, or NaN.
 *
 * Stricter than `Date.parse`, which rolls impossible dates over (`2026-02-31` becomes March 3)
 * and accepts hour 24: a date that names no real day is refused, not silently moved. It reads
 * character codes and allocates nothing, because every event of every batch goes through it.
 */
export function parseIsoTimestamp(text: string): number {
  const n = text.length;
  // Shortest form: YYYY-MM-DDTHH:MM:SSZ (20 characters); longest: 9 fraction digits and an offset.
  if (n < 20 || n > 35) return Number.NaN;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    text.charCodeAt(10) !== T ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    !(month >= 1 && month <= 12) ||
    !(day >= 1 && day <= daysInMonth(year, month)) ||
    !(hour <= 23 && minute <= 59 && second <= 59)
  ) {
    return Number.NaN;
  }
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === DOT) {
    const start = ++i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    const count = i - start;
    if (count < 1 || count > 9) return Number.NaN;
    // Whole milliseconds: the first three digits, the rest dropped (as Date.parse does).
    for (let k = 0; k < 3; k++) ms = ms * 10 + (k < count ? text.charCodeAt(start + k) - ZERO : 0);
  }
  let offsetMinutes = 0;
  const sign = text.charCodeAt(i);
  if (sign === Z) {
    if (i + 1 !== n) return Number.NaN;
  } else if (sign === PLUS || sign === DASH) {
    if (i + 6 !== n || text.charCodeAt(i + 3) !== COLON) return Number.NaN;
    const oh = digits(text, i + 1, 2);
    const om = digits(text, i + 4, 2);
    if (!(oh <= 23 && om <= 59)) return Number.NaN;
    offsetMinutes = (sign === PLUS ? 1 : -1) * (oh * 60 + om);
  } else {
    return Number.NaN;
  }
  // Date.UTC reads years 0–99 as 1900–1999; 400 Gregorian years later the calendar repeats.
  const early = year < 100;
  const utc = Date.UTC(early ? year + 400 : year, month - 1, day, hour, minute, second, ms);
  return (early ? utc - MS_PER_400_YEARS : utc) - offsetMinutes * 60_000;
}

/** True when `value` is an ISO 8601 date-time string that names a real instant. */
export function isIsoTimestamp(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(parseIsoTimestamp(value));
}

/** 146,097 days: one cycle of the Gregorian calendar. */
const MS_PER_400_YEARS = 146_097 * 86_400_000;
const ZERO = 48;
const DASH = 45;
const PLUS = 43;
const DOT = 46;
const COLON = 58;
const T = 84;
const Z = 90;

function isDigit(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9;
}

/** The number written by `count` digits at `start`, or NaN when one is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) return Number.NaN;
    value = value * 10 + code - ZERO;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
