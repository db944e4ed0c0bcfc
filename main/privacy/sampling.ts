/**
 * `sampleRate` (docs/decisions.md, "beforeSend and sampling"): whether a session is sent is decided
 * from its id alone, so every page of the session, and its recording, answers the same without
 * storing anything, and a session is sent whole or not at all.
 */

/** True when the session `id` falls in a sample of `rate` (0–1). FNV-1a of the whole id, so ids that share their random end still spread. */
export function inSample(id: string, rate: number): boolean {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) / 2 ** 32 < rate;
}
