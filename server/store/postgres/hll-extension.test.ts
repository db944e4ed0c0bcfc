import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProject } from '../../../test-support/server/report-fixtures.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { TOP_DIMENSIONS, type ReportQuery } from '../report-store.js';
import { type KeyHash, VisitorSketch, hashKey, registerOfKey, unionSketchBytes } from '../aggregates/visitor-sketch.js';
import { createPostgresStore } from './postgres-store.js';
import { findHllExtension, hllKeyRegister, hllKeyRegisterSql, hllSketchOfSql, hllUnionSql } from './postgres-hll.js';

/*
 * PostgreSQL's `hll` extension against our own sketch code (issue: "the same answers"): the test
 * command installs the extension (scripts/ensure-system-deps.sh), so it is required here. Our
 * hash is the extension's `hll_hash_text`, our bytes are its bytes for the same keys however
 * they are added and merged, and a store that lets the extension merge a report's sketches
 * answers exactly as one that merges them in Node, over the same rows.
 */

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const available = await pool.query("SELECT 1 FROM pg_available_extensions WHERE name = 'hll'");
  if (available.rows.length === 0) {
    throw new Error("PostgreSQL's hll extension is not installed on the test server: install postgresql-15-hll (npm test does, as root).");
  }
  await pool.query('CREATE EXTENSION IF NOT EXISTS hll');
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

/** A hash as the extension's signed 64-bit integer, in decimal. */
const signed = (h: KeyHash): string => BigInt.asIntN(64, (BigInt(h.hi) << 32n) | BigInt(h.lo)).toString();
const hex = (bytes: Uint8Array): string => `\\x${Buffer.from(bytes).toString('hex')}`;

/** Keys of every kind a visitor or session id could be: ASCII, accents, CJK, emoji (surrogate pairs), lone surrogates excepted. */
function variedKeys(n: number, prefix: string): string[] {
  const alphabet = ['a', 'Z', '0', '-', 'é', 'ß', '中', '文', '😀', '🚀', ' ', '/', 'ø'];
  const keys = ['', 'a', 'abc', 'visitor-1', '0195f5c4-7b1e-7d3a-9b7c-1d2e3f405162', 'x'.repeat(1000)];
  let seed = 7;
  for (let i = keys.length; i < n; i++) {
    let key = `${prefix}${i}`;
    const extra = i % 40;
    for (let j = 0; j < extra; j++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      key += alphabet[seed % alphabet.length];
    }
    keys.push(key);
  }
  return keys;
}

/** The extension's sketch of `keys`, added one by one (its own hash), with our parameters. */
async function hllOfKeys(keys: readonly string[]): Promise<string> {
  const { rows } = await pool.query<{ s: string | null }>(
    'SELECT hll_add_agg(hll_hash_text(k), 14, 5, 256, 1)::text AS s FROM unnest($1::text[]) k',
    [keys],
  );
  return rows[0]?.s ?? '\\x118e49';
}

/** Every aggregate report over ranges of a project written from `start` (9 days): whole days, whole hours and pieces of hours from the events. */
async function aggregateAnswers(store: ReturnType<typeof createPostgresStore>, projectId: string, start: number): Promise<unknown[]> {
  const out: unknown[] = [];
  const base: ReportQuery = { projectId, from: start + 3 * 3_600_000 + 17, to: start + 8 * 86_400_000 + 5 * 3_600_000, filters: {}, includeBots: false, visitorKey: 'anonymous' };
  for (const q of [
    base,
    { ...base, includeBots: true, visitorKey: 'hash' as const },
    { ...base, filters: { page: '/pricing' } },
    { ...base, from: start + 2 * 86_400_000 + 1_000, to: start + 2 * 86_400_000 + 7 * 3_600_000 },
  ]) {
    out.push(await store.reports.totals(q));
    out.push(await store.reports.series(q, 86_400_000));
    out.push(await store.reports.series(q, 3_600_000));
    out.push(await store.reports.errors(q, 10));
    for (const dimension of TOP_DIMENSIONS) out.push(await store.reports.top(q, dimension, 5));
  }
  return out;
}

describe("PostgreSQL's hll extension and our sketch", () => {
  it("hashes every key as the extension's hll_hash_text does", async () => {
    const keys = variedKeys(3000, 'k');
    const { rows } = await pool.query<{ h: string }>('SELECT hll_hash_text(k)::text AS h FROM unnest($1::text[]) WITH ORDINALITY u(k, i) ORDER BY i', [keys]);
    expect(rows.map((r) => r.h)).toEqual(keys.map((k) => signed(hashKey(k))));
  });

  it("names in SQL the register the sketch sets for every key, negative hashes too (an erasure's hour reads)", async () => {
    const keys = variedKeys(3000, 'r');
    const register = hllKeyRegisterSql((await findHllExtension(pool)) as string);
    const { rows } = await pool.query<{ r: number | null }>(`SELECT ${register('k')} AS r FROM unnest($1::text[]) WITH ORDINALITY u(k, i) ORDER BY i`, [[...keys, null]]);
    expect(rows.map((r) => r.r)).toEqual([...keys.map(registerOfKey), null]);
    expect(keys.some((k) => signed(hashKey(k)).startsWith('-'))).toBe(true);
    expect(await hllKeyRegister(pool, (await findHllExtension(pool)) as string)).not.toBeNull();
  });

  it('makes the bytes the extension makes, for sets on each side of every change of representation', async () => {
    // Empty; explicit up to 256; registers sparse, then full.
    for (const size of [0, 1, 2, 255, 256, 257, 1000, 4000, 5000, 100_000]) {
      const keys = variedKeys(size, `set${size}-`).slice(0, size);
      const ours = VisitorSketch.empty();
      for (const key of keys) ours.add(hashKey(key));
      expect(hex(ours.toBytes()), `${size} keys`).toBe(await hllOfKeys(keys));
    }
  });

  it('builds in SQL the bytes our sketch makes of a group of keys, nulls passed over (filtered top lists)', async () => {
    const sketchOf = hllSketchOfSql((await findHllExtension(pool)) as string);
    for (const size of [0, 1, 256, 257, 5000]) {
      const keys = variedKeys(size, `of${size}-`).slice(0, size);
      const ours = VisitorSketch.empty();
      for (const key of keys) ours.add(hashKey(key));
      const { rows } = await pool.query<{ s: Buffer | null }>(`SELECT ${sketchOf('k')} AS s FROM unnest($1::text[]) k`, [[...keys, null, null]]);
      expect(hex(rows[0]?.s ?? VisitorSketch.empty().toBytes()), `${size} keys`).toBe(hex(ours.toBytes()));
    }
  });

  it("merges parts to the extension's union, whichever merges them, in any order", async () => {
    for (const size of [40, 256, 300, 4500, 30_000]) {
      const keys = variedKeys(size, `u${size}-`).slice(0, size);
      // Overlapping parts of uneven sizes, as an hour's commits are.
      const parts: Uint8Array[] = [];
      for (let start = 0, n = 1; start < keys.length; start += Math.ceil(n / 2), n *= 3) {
        const part = VisitorSketch.empty();
        for (const key of keys.slice(start, start + n)) part.add(hashKey(key));
        parts.push(part.toBytes());
      }
      const forward = parts.reduce<Uint8Array | null>((a, b) => unionSketchBytes(a, b), null);
      const backward = [...parts].reverse().reduce<Uint8Array | null>((a, b) => unionSketchBytes(a, b), null);
      const { rows } = await pool.query<{ s: string }>('SELECT hll_union_agg(b::hll)::text AS s FROM unnest($1::bytea[]) b', [parts.map((p) => Buffer.from(p))]);
      const all = await hllOfKeys(keys);
      expect(hex(forward as Uint8Array), `${size} keys`).toBe(all);
      expect(hex(backward as Uint8Array)).toBe(all);
      expect(rows[0]?.s).toBe(all);
    }
  });

  it('unions stored sketches in SQL to the bytes our merge makes, nulls passed over and null when all are (reports, erasure, retention)', async () => {
    const union = hllUnionSql((await findHllExtension(pool)) as string);
    for (const size of [1, 256, 257, 5000]) {
      const keys = variedKeys(size, `su${size}-`).slice(0, size);
      const halves = [keys.slice(0, size >> 1), keys.slice(size >> 1)].map((part) => {
        const sketch = VisitorSketch.empty();
        for (const key of part) sketch.add(hashKey(key));
        return Buffer.from(sketch.toBytes());
      });
      const { rows } = await pool.query<{ s: Buffer | null }>(`SELECT ${union('b')} AS s FROM unnest($1::bytea[]) b`, [[null, ...halves, null]]);
      expect(hex(rows[0]?.s as Buffer), `${size} keys`).toBe(hex(unionSketchBytes(halves[0] as Buffer, halves[1] as Buffer)));
    }
    const { rows } = await pool.query<{ s: Buffer | null }>(`SELECT ${union('b')} AS s FROM unnest($1::bytea[]) b`, [[null, null]]);
    expect(rows[0]?.s).toBeNull();
  });

  it('opens, and merges in Node, where its role may not create the extension', async () => {
    // A database owned by a role that is not a superuser: the extension is not a trusted one.
    const role = `r_${Math.random().toString(36).slice(2, 10)}`;
    const name = `${role}_db`;
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`CREATE DATABASE ${name} OWNER ${role}`);
    const url = new URL(database.url);
    url.username = role;
    url.pathname = `/${name}`;
    const store = createPostgresStore({ url: url.toString(), poolSize: 2 });
    try {
      await store.init();
      expect(store.sketchMerge).toBe('node');
      const projectId = newProjectId();
      await writeProject(store, { projectId, start: Date.UTC(2026, 2, 1), days: 1, sessions: 20, seed: 3 }, 100);
      const totals = await store.reports.totals({ projectId, from: Date.UTC(2026, 2, 1), to: Date.UTC(2026, 2, 2), filters: {}, includeBots: true, visitorKey: 'anonymous' });
      expect(totals.sessions).toBe(20);
    } finally {
      await store.close();
      await pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await pool.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it('answers every aggregate report the same whether the extension or Node merges the sketches', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 2, 1);
    const withHll = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000 });
    const withoutHll = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000, hllExtension: false });
    await withHll.init();
    await withoutHll.init();
    try {
      expect(withHll.sketchMerge).toBe('hll');
      expect(withoutHll.sketchMerge).toBe('node');
      // Enough sessions that the whole range's visitors pass the exact range, in small commits so
      // that keys have several parts (the compaction is an hour away).
      await writeProject(withHll, { projectId, start, days: 9, sessions: 900, seed: 5 }, 150);
      const merged = await aggregateAnswers(withHll, projectId, start);
      expect(await aggregateAnswers(withoutHll, projectId, start)).toEqual(merged);
      // Past the exact range: the answers compared are estimates, not only exact counts.
      const totals = merged[0] as { visitors: number };
      expect(totals.visitors).toBeGreaterThan(256);
    } finally {
      await withHll.close();
      await withoutHll.close();
    }
  });

  it("answers as without the extension after an erasure and a retention cut (retention's day and week rows merged by it), sketches past the exact range", async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 2, 2);
    // A database each: retention cuts every project of its database.
    const [mine, other] = [await createTestDatabase(), await createTestDatabase()];
    const withHll = createPostgresStore({ url: mine.url, poolSize: 2, compactEveryMs: 3_600_000 });
    const withoutHll = createPostgresStore({ url: other.url, poolSize: 2, compactEveryMs: 3_600_000, hllExtension: false });
    await withHll.init();
    await withoutHll.init();
    try {
      expect(withHll.sketchMerge).toBe('hll');
      for (const store of [withHll, withoutHll]) await writeProject(store, { projectId, start, days: 9, sessions: 900, seed: 6 }, 150);
      const client = new pg.Client({ connectionString: mine.url });
      await client.connect();
      const heaviest = await client
        .query<{ user_id: string }>('SELECT user_id FROM events WHERE project_id = $1 AND user_id IS NOT NULL GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 1', [projectId])
        .finally(() => client.end());
      const before = await aggregateAnswers(withHll, projectId, start);
      for (const store of [withHll, withoutHll]) {
        expect((await store.deleteUser(projectId, heaviest.rows[0]?.user_id as string)).events).toBeGreaterThan(0);
        // Inside the second day's tenth hour: that hour built again, the day and its week merged again.
        await store.deleteOlderThan(start + 86_400_000 + 9 * 3_600_000 + 1_234);
      }
      const merged = await aggregateAnswers(withHll, projectId, start);
      expect(merged).not.toEqual(before);
      expect(await aggregateAnswers(withoutHll, projectId, start)).toEqual(merged);
      expect((merged[0] as { visitors: number }).visitors).toBeGreaterThan(256);
    } finally {
      await withHll.close();
      await withoutHll.close();
      await mine.drop();
      await other.drop();
    }
  });
});
