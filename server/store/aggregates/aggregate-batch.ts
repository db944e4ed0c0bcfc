import type { KeyHash, SketchKit, VisitorSketch } from './visitor-sketch.js';

/*
 * What one group commit adds to the report aggregates (docs/decisions.md, "Aggregates at ingest"):
 * the stored events of the group, grouped in memory by (project, hour, bot flag, dimension, value)
 * and by (project, hour, bot flag, session), so that the store writes one upsert per group rather
 * than one per event and dimension. Only events the insert stored are added (a duplicate changes
 * nothing). Both stores apply the same groups, SQLite on its writer thread, which receives this
 * function as source text: it must stay self-contained (nothing from outside its body and
 * parameters but erased types).
 */

/** Milliseconds in an hour, the finest grain of the aggregates. */
export const HOUR_MS = 3_600_000;

/** What one (project, hour, bot flag, dimension, value) group adds. */
export interface ValueGroup {
  project: string;
  hour: number;
  bot: 0 | 1;
  /** Index into the aggregate dimensions (`AGGREGATE_DIMS`): 0 for every event. */
  dim: number;
  value: string;
  events: number;
  pageViews: number;
  /** Distinct visitors as reports count them by default: the anonymous id, else the daily hash. */
  visitors: VisitorSketch;
  /** Distinct daily visitor hashes (a project that counts visitors by hash). */
  visitorHashes: VisitorSketch;
  sessions: VisitorSketch;
  /** The same two visitor counts over page views only: what top lists of page dimensions count; null for other dimensions. */
  pageVisitors: VisitorSketch | null;
  pageVisitorHashes: VisitorSketch | null;
}

/** What one (project, hour, bot flag, session) adds. */
export interface SessionGroup {
  project: string;
  hour: number;
  bot: 0 | 1;
  session: string;
  first: number;
  last: number;
  events: number;
  pageViews: number;
}

/** The groups of one commit. */
export interface AggregateBatch {
  /**
   * Adds one stored event. `dimValues` holds its value of each dimension after the first (index 1
   * on) of the aggregate dimensions, null where it has none.
   */
  add(
    project: string,
    type: string,
    session: string | null,
    timestamp: number,
    bot: 0 | 1,
    visitorHash: string | null,
    anonymousId: string | null,
    dimValues: ReadonlyArray<string | null>,
  ): void;
  /** Whether nothing was added. */
  empty(): boolean;
  values(): ValueGroup[];
  sessions(): SessionGroup[];
}

/**
 * Starts the groups of one commit. `pageDims[i]` says whether dimension `i` describes a page load
 * (its top list counts page views).
 */
export function createAggregateBatch(kit: SketchKit, dimCount: number, pageDims: readonly boolean[]): AggregateBatch {
  const hourMs = 3_600_000;
  interface Acc {
    events: number;
    pageViews: number;
    visitors: Set<KeyHash>;
    hashes: Set<KeyHash>;
    sessions: Set<KeyHash>;
    pageVisitors: Set<KeyHash> | null;
    pageHashes: Set<KeyHash> | null;
  }
  interface Cell {
    project: string;
    hour: number;
    bot: 0 | 1;
    dims: Array<Map<string, Acc>>;
    sessions: Map<string, SessionGroup>;
  }
  const cells = new Map<string, Cell>();
  // The cell of the previous event: a commit's events nearly all share one project, hour and bot flag.
  let last: Cell | null = null;
  // One hash object per key and commit: a key repeats across the events of a session, and the
  // sets above then hold it once by identity.
  const hashes = new Map<string, KeyHash>();
  const hashOf = (key: string | null): KeyHash | null => {
    if (key === null) return null;
    let h = hashes.get(key);
    if (h === undefined) hashes.set(key, (h = kit.hashKey(key)));
    return h;
  };
  const sketchOf = (set: Set<KeyHash>): VisitorSketch => {
    const sketch = kit.VisitorSketch.empty();
    for (const h of set) sketch.add(h);
    return sketch;
  };
  let added = 0;
  return {
    add(project, type, session, timestamp, bot, visitorHash, anonymousId, dimValues) {
      added++;
      const hour = Math.floor(timestamp / hourMs);
      let cell = last;
      if (cell === null || cell.hour !== hour || cell.bot !== bot || cell.project !== project) {
        const cellKey = `${project}\u0000${hour}\u0000${bot}`;
        cell = cells.get(cellKey) ?? null;
        if (cell === null) {
          cell = { project, hour, bot, dims: Array.from({ length: dimCount }, () => new Map<string, Acc>()), sessions: new Map() };
          cells.set(cellKey, cell);
        }
        last = cell;
      }
      const pageView = type === 'page_view';
      const visitor = hashOf(anonymousId ?? visitorHash);
      const hashed = hashOf(visitorHash);
      const sessionHash = hashOf(session);
      for (let d = 0; d < dimCount; d++) {
        const value = d === 0 ? '' : dimValues[d - 1];
        if (value === null || value === undefined) continue;
        const groups = cell.dims[d] as Map<string, Acc>;
        let acc = groups.get(value);
        if (acc === undefined) {
          const page = pageDims[d] === true;
          acc = { events: 0, pageViews: 0, visitors: new Set(), hashes: new Set(), sessions: new Set(), pageVisitors: page ? new Set() : null, pageHashes: page ? new Set() : null };
          groups.set(value, acc);
        }
        acc.events++;
        if (visitor !== null) acc.visitors.add(visitor);
        if (hashed !== null) acc.hashes.add(hashed);
        if (sessionHash !== null) acc.sessions.add(sessionHash);
        if (pageView) {
          acc.pageViews++;
          if (visitor !== null) acc.pageVisitors?.add(visitor);
          if (hashed !== null) acc.pageHashes?.add(hashed);
        }
      }
      if (session !== null) {
        const group = cell.sessions.get(session);
        if (group === undefined) {
          cell.sessions.set(session, { project, hour, bot, session, first: timestamp, last: timestamp, events: 1, pageViews: pageView ? 1 : 0 });
        } else {
          if (timestamp < group.first) group.first = timestamp;
          if (timestamp > group.last) group.last = timestamp;
          group.events++;
          if (pageView) group.pageViews++;
        }
      }
    },
    empty: () => added === 0,
    values() {
      const out: ValueGroup[] = [];
      for (const cell of cells.values()) {
        for (let d = 0; d < dimCount; d++) {
          for (const [value, acc] of cell.dims[d] as Map<string, Acc>) {
            out.push({
              project: cell.project,
              hour: cell.hour,
              bot: cell.bot,
              dim: d,
              value,
              events: acc.events,
              pageViews: acc.pageViews,
              visitors: sketchOf(acc.visitors),
              visitorHashes: sketchOf(acc.hashes),
              sessions: sketchOf(acc.sessions),
              pageVisitors: acc.pageVisitors === null ? null : sketchOf(acc.pageVisitors),
              pageVisitorHashes: acc.pageHashes === null ? null : sketchOf(acc.pageHashes),
            });
          }
        }
      }
      return out;
    },
    sessions: () => [...cells.values()].flatMap((cell) => [...cell.sessions.values()]),
  };
}
