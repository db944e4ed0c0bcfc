/*
 * PostgreSQL cannot store U+0000 in text, nor a `\u0000` or lone-surrogate escape in jsonb: one such
 * string would fail a whole group commit, i.e. every request batched with it. Lone surrogates in
 * text would also come back from either database as U+FFFD (UTF-8 cannot encode them), so a
 * returned id would no longer match the one sent. Both stores therefore replace NUL and lone
 * surrogates with U+FFFD before writing, and behave alike.
 *
 * `cleanText` and `cleanJson` are self-contained (no reference outside their own bodies): the
 * SQLite writer thread receives them as source text (`sqlite-writer.ts`), so both stores run the
 * one definition.
 */

/** ES2024 string methods (Node 20 has them; the project's `lib` is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** `value` with NUL characters and lone surrogates replaced; the same string when clean (the usual case). */
export function cleanText(value: string): string {
  let clean = value;
  if (!(clean as unknown as WellFormedString).isWellFormed()) clean = (clean as unknown as WellFormedString).toWellFormed();
  return clean.indexOf('\0') === -1 ? clean : clean.replaceAll('\0', '\uFFFD');
}

/** {@link cleanText} that passes null through. */
export function cleanNullableText(value: string | null): string | null {
  return value === null ? null : cleanText(value);
}

/** JSON text (from JSON.stringify) with NUL and lone-surrogate escapes replaced by U+FFFD. */
export function cleanJson(json: string): string {
  // indexOf is far cheaper than the regex and nearly every document has no escape at all.
  if (json.indexOf('\\u') === -1) return json;
  // `\u0000` or a surrogate escape, preceded by an even number of backslashes (an odd number means
  // the backslash itself was escaped and the `u` is plain text). JSON.stringify escapes a surrogate
  // only when it is unpaired, so every surrogate escape in its output is a lone one.
  return json.replace(/(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g, '$1\uFFFD');
}

/** A time in whole milliseconds: PostgreSQL stores BIGINT, so both stores round alike. */
export function wholeMs(value: number): number {
  return Math.round(value);
}

/** {@link wholeMs} that passes null through. */
export function wholeMsOrNull(value: number | null): number | null {
  return value === null ? null : Math.round(value);
}
