/**
 * How the dashboard names a country. The `country` report column holds ISO 3166-1 alpha-2 codes
 * (docs/protocol.md, "Report columns"); the name comes from the browser's own data
 * (`Intl.DisplayNames`), the flag from the code's letters, so no table of countries ships here.
 */

/** Two capital letters: a code the `country` column can hold. */
const CODE = /^[A-Z]{2}$/;

/** Where "A" is among the regional indicator symbols (U+1F1E6 is the one of "A"). */
const REGIONAL_A = 0x1f1e6 - 'A'.charCodeAt(0);

/**
 * The flag of a code: its two letters as regional indicator symbols, which systems with flag
 * emoji draw as the flag (others as the two letters). '' for anything that is not a code.
 */
export function countryFlag(code: string): string {
  if (!CODE.test(code)) return '';
  return String.fromCodePoint(REGIONAL_A + code.charCodeAt(0), REGIONAL_A + code.charCodeAt(1));
}

/** Names by region code in English, made on first use and reused (a formatter holds no state). */
let names: Intl.DisplayNames | undefined;

/**
 * The English name of a code (`GB`: "United Kingdom"); the code itself when the browser knows no
 * name for it, or for a value that is not a code.
 */
export function countryName(code: string): string {
  if (!CODE.test(code)) return code;
  names ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
  return names.of(code) ?? code;
}
