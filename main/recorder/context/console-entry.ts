/**
 * A noted console call as the entry a recording carries (`protocol/replay-entries.ts`): its
 * arguments formatted and cut at the size cap, a stack where there is one, and both masked. Runs
 * when the capture's queue is drained, off the page's critical path.
 */
import type { ConsoleEntry } from '../../../protocol/replay-entries.js';
import type { RawConsoleCall } from './console-capture.js';
import { errorHeader, formatArgs } from './format-value.js';

/** How an entry's text is masked. */
export interface EntryMasking {
  /** Masks a message: every character with `maskAllText`, else the values the masking hid. */
  message(text: string): string;
  /** Masks a stack's frames (code locations are not page text: only the values the masking hid). */
  stack(text: string): string;
}

/** The entry of `call`, each text at most `maxLength` characters. */
export function consoleEntry(call: RawConsoleCall, maxLength: number, mask: EntryMasking): ConsoleEntry {
  const formatted = formatArgs(call.args, maxLength);
  const entry: ConsoleEntry = { level: call.level, message: mask.message(formatted.text) };
  const error = call.args.find((arg): arg is Error => arg instanceof Error);
  const stack = error !== undefined ? framesOf(error, 0) : call.site !== undefined ? framesOf(call.site, 1) : '';
  let truncated = formatted.truncated;
  if (stack !== '') {
    truncated ||= stack.length > maxLength;
    entry.stack = mask.stack(stack.slice(0, maxLength));
  }
  if (call.source === 'uncaught') entry.source = 'uncaught';
  if (call.dropped > 0) entry.dropped = call.dropped;
  if (truncated) entry.truncated = true;
  return entry;
}

/**
 * The frames of `error`'s stack, without its header (`Name: message`, which the message already
 * holds, masked) and without the first `skip` frames (the console wrapper, for a call's own stack).
 */
export function framesOf(error: Error, skip: number): string {
  let stack: string;
  try {
    stack = typeof error.stack === 'string' ? error.stack : '';
  } catch {
    return '';
  }
  const header = errorHeader(error);
  if (stack.startsWith(header)) stack = stack.slice(header.length);
  // V8 writes frames as "    at …"; Firefox and Safari as "fn@url:line:col", without a header.
  const lines = stack.split('\n').filter((line) => line.trim() !== '');
  return lines
    .slice(skip)
    .map((line) => line.trim())
    .join('\n');
}
