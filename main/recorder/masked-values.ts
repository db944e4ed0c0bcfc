/**
 * Values the recording's masking hid, remembered so that the same value cannot reach the server by
 * another road: a console message, a request URL or a recorded body (README "Session recording":
 * console and network are masked by the rules of the page's text and inputs). A value typed into a
 * masked field and then logged is recorded with each of its characters as `*`.
 *
 * The masking functions note what they hide (`capture-options.ts` wraps them); the console and
 * network capture redact with it when they format an entry, off the page's critical path.
 */

/** Values shorter than this are not noted: redacting every "a" or "42" would blank every message. */
export const MIN_MASKED_VALUE_LENGTH = 3;
/** Longest value noted; a longer text is noted by its first this many characters. */
export const MAX_MASKED_VALUE_LENGTH = 1000;
/** Most values kept; the oldest go first. */
export const MAX_MASKED_VALUES = 500;

/** The remembered values of one recorder. */
export interface MaskedValues {
  /** Notes a value the masking hid (each keystroke's value of a masked input, a masked text). */
  note(value: string): void;
  /** `text` with every noted value in it replaced by as many `*`. */
  redact(text: string): string;
  /** How many values are noted. */
  readonly size: number;
}

/** Creates an empty set of masked values. */
export function createMaskedValues(): MaskedValues {
  const values = new Set<string>();
  /** The values longest first, made again after a change: a value must be redacted before its prefixes. */
  let ordered: string[] | null = null;
  return {
    note(value) {
      const text = value.trim().slice(0, MAX_MASKED_VALUE_LENGTH);
      if (text.length < MIN_MASKED_VALUE_LENGTH || values.has(text)) return;
      values.add(text);
      if (values.size > MAX_MASKED_VALUES) values.delete(values.values().next().value as string);
      ordered = null;
    },
    redact(text) {
      if (values.size === 0 || text.length < MIN_MASKED_VALUE_LENGTH) return text;
      ordered ??= [...values].sort((a, b) => b.length - a.length);
      let out = text;
      for (const value of ordered) if (out.includes(value)) out = out.split(value).join('*'.repeat(value.length));
      return out;
    },
    get size() {
      return values.size;
    },
  };
}
