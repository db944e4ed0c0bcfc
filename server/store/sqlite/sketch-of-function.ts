import type Database from 'better-sqlite3';
import type { SketchKit, VisitorSketch } from '../aggregates/visitor-sketch.js';

/**
 * Registers `sa_sketch_of(key)` on a connection: the aggregate of a group's keys (text; null is
 * passed over) as the stored bytes of their sketch, the bytes `VisitorSketch` makes of the same
 * keys. A report that counts visitors of many rows (`reports/filtered-tops.ts`) so gets one sketch
 * per group from the database rather than every row, and the hashing runs where the statement
 * runs: on the reader thread, not the request thread.
 *
 * It runs on the reader thread (`sqlite-reader.ts`), which receives it as source text, so it must
 * stay self-contained: nothing from outside its body and parameters but erased types.
 */
export function registerSketchOf(db: Database.Database, kit: SketchKit): void {
  db.aggregate('sa_sketch_of', {
    start: () => null,
    step: (sketch: unknown, key: unknown): unknown => {
      if (typeof key !== 'string') return sketch;
      const s = (sketch as VisitorSketch | null) ?? kit.VisitorSketch.empty();
      s.add(kit.hashKey(key));
      return s;
    },
    result: (sketch: unknown): unknown => {
      const bytes = ((sketch as VisitorSketch | null) ?? kit.VisitorSketch.empty()).toBytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  });
}
