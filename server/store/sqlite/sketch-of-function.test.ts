import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { VisitorSketch, createSketchKit, hashKey } from '../aggregates/visitor-sketch.js';
import { registerSketchOf } from './sketch-of-function.js';

describe('sa_sketch_of', () => {
  it('makes of a group of keys the bytes our sketch makes, nulls passed over, empty for none', () => {
    const db = new Database(':memory:');
    try {
      registerSketchOf(db, createSketchKit());
      db.exec('CREATE TABLE k (g INTEGER, key TEXT)');
      const insert = db.prepare('INSERT INTO k VALUES (?, ?)');
      const sizes = [0, 1, 256, 257, 5000];
      for (const size of sizes) {
        for (let i = 0; i < size; i++) insert.run(size, `key-${size}-${i}`);
        insert.run(size, null);
      }
      const rows = db.prepare('SELECT g, sa_sketch_of(key) AS s FROM k GROUP BY g ORDER BY g').all() as Array<{ g: number; s: Buffer }>;
      expect(rows.map((r) => r.g)).toEqual(sizes);
      for (const { g, s } of rows) {
        const ours = VisitorSketch.empty();
        for (let i = 0; i < g; i++) ours.add(hashKey(`key-${g}-${i}`));
        expect(Buffer.from(s).toString('hex'), `${g} keys`).toBe(Buffer.from(ours.toBytes()).toString('hex'));
      }
    } finally {
      db.close();
    }
  });
});
