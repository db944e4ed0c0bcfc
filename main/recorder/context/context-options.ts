/**
 * The console and network options of a recording with their defaults applied
 * ({@link ConsoleCaptureOptions}, {@link NetworkCaptureOptions}). A value of the wrong type falls
 * back to its default, as everywhere in the recorder's configuration (`capture-options.ts`).
 */
import type { ConsoleLevel } from '../../../protocol/replay-entries.js';
import type { ConsoleCaptureOptions, NetworkCaptureOptions } from '../recording-config.js';

/** Console options with every default applied. */
export interface ResolvedConsoleOptions {
  levels: ConsoleLevel[];
  maxEntriesPerSecond: number;
  maxEntryLength: number;
  uncaught: boolean;
}

/** Network options with every default applied; the denied headers include the fixed list. */
export interface ResolvedNetworkOptions {
  allowQueryParams: ReadonlySet<string>;
  allowUrls: Array<string | RegExp>;
  recordHeaders: boolean;
  recordBodies: boolean;
  /** Lower-case names added to the fixed list (`network-headers.ts`). */
  denyHeaders: ReadonlySet<string>;
  maxBodyLength: number;
  maxEntriesPerSecond: number;
}

const LEVELS: readonly ConsoleLevel[] = ['log', 'info', 'warn', 'error', 'debug', 'assert'];

/** Defaults of {@link ConsoleCaptureOptions}: `debug` is left out, it is the noisiest level. */
export const CONSOLE_DEFAULTS: ResolvedConsoleOptions = {
  levels: ['log', 'info', 'warn', 'error', 'assert'],
  maxEntriesPerSecond: 50,
  maxEntryLength: 2000,
  uncaught: true,
};

/** Defaults of {@link NetworkCaptureOptions}: nothing but the request line, status, timing and sizes. */
export const NETWORK_DEFAULTS: ResolvedNetworkOptions = {
  allowQueryParams: new Set(),
  allowUrls: [],
  recordHeaders: false,
  recordBodies: false,
  denyHeaders: new Set(),
  maxBodyLength: 10_000,
  maxEntriesPerSecond: 500,
};

const positive = (value: unknown): value is number => typeof value === 'number' && value > 0 && Number.isFinite(value);
const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');
const asObject = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

/** Console options for `given` (`true` or an object); null when console capture is off. */
export function resolveConsoleOptions(given: boolean | ConsoleCaptureOptions | undefined): ResolvedConsoleOptions | null {
  if (given === undefined || given === false) return null;
  const o = asObject(given);
  const d = CONSOLE_DEFAULTS;
  const levels = Array.isArray(o.levels) ? o.levels.filter((l): l is ConsoleLevel => LEVELS.includes(l as ConsoleLevel)) : d.levels;
  return {
    levels,
    maxEntriesPerSecond: positive(o.maxEntriesPerSecond) ? Math.floor(o.maxEntriesPerSecond) : d.maxEntriesPerSecond,
    maxEntryLength: positive(o.maxEntryLength) ? Math.floor(o.maxEntryLength) : d.maxEntryLength,
    uncaught: typeof o.uncaught === 'boolean' ? o.uncaught : d.uncaught,
  };
}

/** Network options for `given` (`true` or an object); null when network capture is off. */
export function resolveNetworkOptions(given: boolean | NetworkCaptureOptions | undefined): ResolvedNetworkOptions | null {
  if (given === undefined || given === false) return null;
  const o = asObject(given);
  const d = NETWORK_DEFAULTS;
  const allowUrls = Array.isArray(o.allowUrls) ? o.allowUrls.filter((u): u is string | RegExp => (typeof u === 'string' && u !== '') || u instanceof RegExp) : d.allowUrls;
  return {
    allowQueryParams: strings(o.allowQueryParams) ? new Set(o.allowQueryParams) : d.allowQueryParams,
    allowUrls,
    recordHeaders: o.recordHeaders === true,
    recordBodies: o.recordBodies === true,
    denyHeaders: strings(o.denyHeaders) ? new Set(o.denyHeaders.map((h) => h.toLowerCase())) : d.denyHeaders,
    maxBodyLength: positive(o.maxBodyLength) ? Math.floor(o.maxBodyLength) : d.maxBodyLength,
    maxEntriesPerSecond: positive(o.maxEntriesPerSecond) ? Math.floor(o.maxEntriesPerSecond) : d.maxEntriesPerSecond,
  };
}
