/**
 * Where the main thread's time goes: a V8 CPU profile of the page (CDP `Profiler`), reduced to self
 * time per function, for the benchmark's "where the time goes" table.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';

/** The parts of a CDP `Profiler.Profile` used here. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Self time of one function. */
export interface HotSpot {
  /** `name (file:line:column)`, or a V8 category such as `(garbage collector)`. */
  where: string;
  selfMs: number;
}

/** What profiling needs of a CDP session to the page (bench/client/cdp.ts `CdpPage`). */
export interface CdpSender {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>): Promise<T>;
}

/** Starts sampling every `intervalMicros` µs; resolves with a function that stops and returns the profile. */
export async function startProfile(session: CdpSender, intervalMicros = 50): Promise<() => Promise<CpuProfile>> {
  await session.send('Profiler.enable');
  await session.send('Profiler.setSamplingInterval', { interval: intervalMicros });
  await session.send('Profiler.start');
  return async () => {
    const { profile } = await session.send<{ profile: CpuProfile }>('Profiler.stop');
    await session.send('Profiler.disable');
    return profile;
  };
}

/**
 * Self time per function, largest first. `(idle)` is left out, so the rest adds up to the time the
 * thread was busy: JavaScript, the garbage collector, and `(program)`: native work outside
 * JavaScript (task and message dispatch, deserialising messages, scheduling).
 */
export function hotSpots(profile: CpuProfile, resolve: Resolver = () => undefined): { spots: HotSpot[]; busyMs: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // A sample's time is the delta to the next sample.
    const micros = deltas[i + 1] ?? 0;
    const node = byId.get(samples[i]!);
    if (node === undefined) continue;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(root)') continue;
    const where =
      resolve(url, lineNumber, columnNumber) ??
      `${functionName === '' ? '(anonymous)' : functionName}${url === '' ? '' : ` (${url.replace(/^https?:\/\/[^/]+/, '')}:${lineNumber + 1}:${columnNumber + 1})`}`;
    self.set(where, (self.get(where) ?? 0) + micros);
  }
  const spots = [...self.entries()].map(([where, micros]) => ({ where, selfMs: micros / 1000 })).sort((a, b) => b.selfMs - a.selfMs);
  return { spots, busyMs: spots.reduce((sum, spot) => sum + spot.selfMs, 0) };
}

/** Names a profile position in the original sources, or undefined to keep the generated one. */
export type Resolver = (url: string, line: number, column: number) => string | undefined;

/**
 * Resolves positions in the client build (`/dist/client/*.js` served from `clientDir`) through the
 * build's source maps, to `function (main/file.ts:line)`.
 */
export function sourceMapResolver(clientDir: string): Resolver {
  const maps = new Map<string, SourceMap | null>();
  const load = (file: string): SourceMap | null => {
    if (!maps.has(file)) {
      try {
        maps.set(file, new SourceMap(JSON.parse(readFileSync(join(clientDir, `${file}.map`), 'utf8'))));
      } catch {
        maps.set(file, null);
      }
    }
    return maps.get(file) ?? null;
  };
  return (url, line, column) => {
    const match = /\/dist\/client\/([^/?#]+\.js)$/.exec(url);
    if (match === null) return undefined;
    const entry = load(match[1]!)?.findEntry(line, column) as
      | { originalSource?: string; originalLine?: number; name?: string }
      | undefined;
    if (entry?.originalSource === undefined) return undefined;
    const source = entry.originalSource.replace(/^.*?((?:main|worker|protocol)\/)/, '$1');
    return `${entry.name ?? '(anonymous)'} (${source}:${(entry.originalLine ?? 0) + 1})`;
  };
}
