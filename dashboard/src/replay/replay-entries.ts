/**
 * The console and network entries of a recording (rrweb custom events with the recorder's tags,
 * docs/protocol.md "Console and network entries"), in time order, each with its offset from the
 * replay's start, for the panels beside the player. The recording is what a client uploaded: every
 * field is checked, and an entry that does not fit is left out rather than shown wrong.
 */
import type { ConsoleEntry, ConsoleLevel, NetworkEntry } from '../../../protocol/replay-entries.js';
import type { RecordedEvent } from '../api/wire-types.js';

/** rrweb's `EventType.Custom`. */
const CUSTOM_EVENT = 5;
const CONSOLE_TAG = 'service-analytics:console';
const NETWORK_TAG = 'service-analytics:network';
const LEVELS: readonly ConsoleLevel[] = ['log', 'info', 'warn', 'error', 'debug', 'assert'];

/** An entry and when it happened. */
export interface TimedEntry<T> {
  /** Milliseconds from the replay's start (the player's clock). */
  offset: number;
  entry: T;
}

/** A recording's entries. */
export interface ReplayEntries {
  console: Array<TimedEntry<ConsoleEntry>>;
  network: Array<TimedEntry<NetworkEntry>>;
}

/** The entries of `events`; offsets count from the earliest event, where rrweb's player starts. */
export function replayEntries(events: readonly RecordedEvent[]): ReplayEntries {
  const out: ReplayEntries = { console: [], network: [] };
  if (events.length === 0) return out;
  let start = Infinity;
  for (const e of events) if (e.timestamp < start) start = e.timestamp;
  for (const e of events) {
    if (e.type !== CUSTOM_EVENT || typeof e.data !== 'object' || e.data === null) continue;
    const { tag, payload } = e.data as { tag?: unknown; payload?: unknown };
    const offset = e.timestamp - start;
    if (tag === CONSOLE_TAG) {
      const entry = asConsoleEntry(payload);
      if (entry !== null) out.console.push({ offset, entry });
    } else if (tag === NETWORK_TAG) {
      const entry = asNetworkEntry(payload);
      if (entry !== null) out.network.push({ offset, entry });
    }
  }
  out.console.sort((a, b) => a.offset - b.offset);
  out.network.sort((a, b) => a.offset - b.offset);
  return out;
}

/** The index of the last entry at or before `offset` (the player's clock), -1 when none. */
export function currentIndex(list: ReadonlyArray<{ offset: number }>, offset: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid]!.offset <= offset) low = mid + 1;
    else high = mid;
  }
  return low - 1;
}

/** A request that failed: an error answer (4xx, 5xx), or none at all (a beacon is never failed unless refused). */
export function isFailed(entry: NetworkEntry): boolean {
  return entry.status >= 400 || entry.error !== undefined;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

function asConsoleEntry(payload: unknown): ConsoleEntry | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const p = payload as Record<string, unknown>;
  if (!LEVELS.includes(p.level as ConsoleLevel) || typeof p.message !== 'string') return null;
  const entry: ConsoleEntry = { level: p.level as ConsoleLevel, message: p.message };
  if (text(p.stack) !== undefined) entry.stack = p.stack as string;
  if (p.source === 'uncaught') entry.source = 'uncaught';
  if (count(p.dropped) !== undefined) entry.dropped = p.dropped as number;
  if (p.truncated === true) entry.truncated = true;
  return entry;
}

function asHeaders(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) if (typeof v === 'string') out[name] = v;
  return out;
}

function asNetworkEntry(payload: unknown): NetworkEntry | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const p = payload as Record<string, unknown>;
  const initiator = p.initiator === 'fetch' || p.initiator === 'xhr' || p.initiator === 'beacon' ? p.initiator : null;
  if (initiator === null || typeof p.method !== 'string' || typeof p.url !== 'string' || count(p.status) === undefined) return null;
  const entry: NetworkEntry = { initiator, method: p.method, url: p.url, status: p.status as number, duration: count(p.duration) ?? 0 };
  if (text(p.error) !== undefined) entry.error = p.error as string;
  if (count(p.requestSize) !== undefined) entry.requestSize = p.requestSize as number;
  if (count(p.responseSize) !== undefined) entry.responseSize = p.responseSize as number;
  const requestHeaders = asHeaders(p.requestHeaders);
  if (requestHeaders !== undefined) entry.requestHeaders = requestHeaders;
  const responseHeaders = asHeaders(p.responseHeaders);
  if (responseHeaders !== undefined) entry.responseHeaders = responseHeaders;
  if (text(p.requestBody) !== undefined) entry.requestBody = p.requestBody as string;
  if (text(p.responseBody) !== undefined) entry.responseBody = p.responseBody as string;
  return entry;
}
