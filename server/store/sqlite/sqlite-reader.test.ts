import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../store-error.js';
import { type SqliteReader, startSqliteReader } from './sqlite-reader.js';

/** A read that keeps a core busy for a few seconds: `rows` rows counted one by one. */
const heavy = (rows = 20_000_000): string => `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows}) SELECT count(*) AS n FROM c`;
const HEAVY = heavy();

/** How a read ended: 'answered', or the store error's code (any other error as its text). */
const outcome = (read: Promise<unknown>): Promise<string> =>
  read.then(
    () => 'answered',
    (error: unknown) => (isStoreError(error) ? error.code : String(error)),
  );

/** How a read was refused: its store error's code, and whether the read goes on. */
const refusal = (read: Promise<unknown>): Promise<unknown> =>
  read.then(
    () => 'answered',
    (error: unknown) => (isStoreError(error) ? { code: error.code, continues: error.continues } : String(error)),
  );

/**
 * Reads row 'b' until a thread answers, once the runaway reads have ended. Bounded: the runaways
 * count for seconds, and each try waits at most the reader's budget.
 */
async function readOnceFree(reader: SqliteReader, tries: number): Promise<unknown> {
  let answer: unknown = null;
  for (let i = 0; i < tries && answer === null; i++) answer = await reader.all('SELECT v FROM t WHERE k = ?', ['b']).catch(() => null);
  return answer;
}

describe('startSqliteReader(options)', () => {
  let dir: string;
  let path: string;
  let reader: SqliteReader;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sa-reader-'));
    path = join(dir, 'analytics.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT, v INTEGER); INSERT INTO t VALUES (\'a\', 1), (\'b\', 2);');
    db.close();
    reader = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 150 });
  });
  afterAll(async () => {
    await reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers reads with positional and named values on its own thread', async () => {
    expect(await reader.all('SELECT k, v FROM t WHERE v >= ? ORDER BY v', [1])).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
    expect(await reader.all('SELECT k FROM t WHERE v = @v', { v: 2 })).toEqual([{ k: 'b' }]);
  });

  it('refuses a read past its budget with BUSY while the request thread keeps running, and reads again once the runaway ends', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      const heavy = outcome(reader.all(HEAVY, []));
      // Queued behind the runaway read: refused at its own budget, never run.
      const waiting = outcome(reader.all('SELECT 1 AS one', []));
      expect(await heavy).toBe('BUSY');
      expect(await waiting).toBe('BUSY');
      // The event loop of this thread ran all along: the read held another thread.
      expect(ticks).toBeGreaterThan(0);
      // The abandoned thread finishes its count on its own; then a new one answers.
      expect(await readOnceFree(reader, 400)).toEqual([{ v: 2 }]);
    } finally {
      clearInterval(ticker);
    }
  });

  it('rejects a statement the database refuses with its message, and keeps serving', async () => {
    await expect(reader.all('SELECT nope FROM t', [])).rejects.toThrow(/SQLite reader: no such column: nope/);
    await expect(reader.all('DELETE FROM t', [])).rejects.toThrow(/readonly|read-only|does not return data/i);
    expect(await reader.all('SELECT count(*) AS n FROM t', [])).toEqual([{ n: 2 }]);
  });

  it('closes at once while a read is in flight: the read is refused, its thread left to end', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 60_000 });
    const heavy = outcome(own.all(HEAVY, []));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await own.close();
    // Had close waited for the count, the read would have been answered.
    expect(await heavy).toBe('NOT_OPEN');
  });

  it('with two threads, answers a read while another runs long, and refuses past the budget only what waits behind two runaways', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 400, threads: 2 });
    try {
      const first = outcome(own.all(HEAVY, []));
      // The other thread answers at once, while the first still counts (it runs past its budget).
      expect(await own.all('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([{ v: 1 }]);
      expect(await own.all('SELECT count(*) AS n FROM t', [])).toEqual([{ n: 2 }]);
      // A second runaway (another statement: the same one may wait for the first's answer) takes
      // the other thread: both given up, and no third thread starts while they run, so a read
      // behind them is refused at its budget.
      const second = outcome(own.all(heavy(20_000_001), []));
      const behind = outcome(own.all('SELECT 1 AS one', []));
      expect(await first).toBe('BUSY');
      expect(await second).toBe('BUSY');
      expect(await behind).toBe('BUSY');
      // Once the runaways end, new threads answer.
      expect(await readOnceFree(own, 200)).toEqual([{ v: 2 }]);
    } finally {
      await own.close();
    }
  });

  it('runs scans on all threads but one: a read asked behind two scans answers while the first still runs', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 60_000, threads: 2 });
    try {
      let done = 0;
      const first = own.all(HEAVY, [], { scan: true }).then((rows) => (done++, rows));
      const second = own.all(HEAVY, [], { scan: true }).then((rows) => (done++, rows));
      // The second scan waits for the first; the read after it takes the other thread at once.
      expect(await own.all('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([{ v: 1 }]);
      expect(done).toBe(0);
      expect(await first).toEqual([{ n: 20_000_000 }]);
      expect(await second).toEqual([{ n: 20_000_000 }]);
    } finally {
      await own.close();
    }
  });

  it('runs scans on at most `scanThreads` threads: a scan waits for the one running while other reads take the other threads', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 60_000, threads: 3, scanThreads: 1 });
    try {
      const order: string[] = [];
      const first = own.all(HEAVY, [], { scan: true }).then(() => order.push('first scan'));
      // Cheap, but a scan: it waits for the first, though a thread is free.
      const second = own.all('SELECT 2 AS two', [], { scan: true }).then(() => order.push('second scan'));
      await Promise.all([own.all('SELECT 1 AS one', []), own.all('SELECT 1 AS one', [])]);
      order.push('reads');
      await Promise.all([first, second]);
      expect(order).toEqual(['reads', 'first scan', 'second scan']);
    } finally {
      await own.close();
    }
  });

  it('answers the same read asked again from its runaway: waiting for it without a thread of its own, then from its kept answer', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 300, threads: 2 });
    try {
      // Refused, and says so: its thread goes on with it.
      expect(await refusal(own.all(HEAVY, []))).toEqual({ code: 'BUSY', continues: true });
      // Asked again while the runaway counts: it waits for that answer, so the one thread left
      // answers another read at once (a second copy of the count would hold it past the budget).
      const again = own.all(HEAVY, []).then(
        (rows) => rows,
        (error: unknown) => (isStoreError(error) ? error.code : error),
      );
      expect(await own.all('SELECT v FROM t WHERE k = ?', ['a'])).toEqual([{ v: 1 }]);
      // Its own budget may end before the count does; either way no other answer is possible.
      expect([[{ n: 20_000_000 }], 'BUSY']).toContainEqual(await again);
      // Asked until the count ends (each try waits for it at most its budget): then answered.
      let answer: unknown = null;
      for (let i = 0; i < 200 && answer === null; i++) answer = await own.all(HEAVY, []).catch(() => null);
      expect(answer).toEqual([{ n: 20_000_000 }]);
      // The runaway has ended and its answer is kept: asked again, the count is answered at once,
      // where running it would be refused at the budget.
      expect(await own.all(HEAVY, [])).toEqual([{ n: 20_000_000 }]);
      // Only that read: other values are another read.
      expect(await outcome(own.all(`${HEAVY} WHERE ? = 1`, [1]))).toBe('BUSY');
    } finally {
      await own.close();
    }
  });

  it('lets the same read waiting in the queue wait for the runaway\'s answer, not run it again, and says so', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 300 });
    try {
      const first = refusal(own.all(HEAVY, []));
      // Queued behind it (one thread), asked before it ran past its budget.
      const queued = refusal(own.all(HEAVY, []));
      const other = refusal(own.all('SELECT 1 AS one', []));
      expect(await first).toEqual({ code: 'BUSY', continues: true });
      // Moved to wait for the runaway's answer: refused at its own budget, as a read that goes on.
      expect(await queued).toEqual({ code: 'BUSY', continues: true });
      // Another read waits for a thread, and is refused as one that never ran.
      expect(await other).toEqual({ code: 'BUSY', continues: false });
    } finally {
      await own.close();
    }
  });

  it('forgets kept answers at `forget()`: a runaway from before is neither waited for nor kept', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 300, threads: 2 });
    try {
      const rows = heavy(20_000_003);
      expect(await refusal(own.all(rows, []))).toEqual({ code: 'BUSY', continues: true });
      own.forget();
      // Not joined: it runs as a second copy, on the other thread, and is refused at its budget as
      // a read that goes on; the first runaway's answer, when it comes, is not kept.
      expect(await refusal(own.all(rows, []))).toEqual({ code: 'BUSY', continues: true });
      own.forget();
      // Once both copies have ended, the count runs again: nothing of theirs was kept.
      let free: unknown = null;
      for (let i = 0; i < 200 && free === null; i++) {
        free = await Promise.all([own.all('SELECT v FROM t WHERE k = ?', ['a']), own.all('SELECT v FROM t WHERE k = ?', ['b'])]).catch(() => null);
      }
      expect(await refusal(own.all(rows, []))).toEqual({ code: 'BUSY', continues: true });
    } finally {
      await own.close();
    }
  });

  it('keeps no answer of a read within its budget, and forgets a runaway\'s after `keptAnswerMs`', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 300, keptAnswerMs: 100 });
    const writer = new Database(path);
    try {
      expect(await own.all('SELECT count(*) AS n FROM t', [])).toEqual([{ n: 2 }]);
      writer.prepare('INSERT INTO t VALUES (?, ?)').run('c', 3);
      expect(await own.all('SELECT count(*) AS n FROM t', [])).toEqual([{ n: 3 }]);
      const rows = heavy(20_000_002);
      expect(await outcome(own.all(rows, []))).toBe('BUSY');
      expect(await readOnceFree(own, 200)).toEqual([{ v: 2 }]);
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Forgotten: the count runs again, past its budget.
      expect(await outcome(own.all(rows, []))).toBe('BUSY');
    } finally {
      writer.prepare('DELETE FROM t WHERE k = ?').run('c');
      writer.close();
      await own.close();
    }
  });

  it('refuses a count of threads or scan threads that is not a positive integer', async () => {
    for (const bad of [{ threads: 0 }, { threads: 2.5 }, { threads: Number.NaN }, { threads: 2, scanThreads: 0 }, { threads: 3, scanThreads: 1.5 }]) {
      await expect(startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 1000, ...bad })).rejects.toThrow(/must be a positive integer/);
    }
  });

  it('counts a scan given up past its budget among the scans until its thread ends: the other thread stays for other reads', async () => {
    const own = await startSqliteReader({ path, busyTimeoutMs: 1000, budgetMs: 300, threads: 2 });
    try {
      // Past its budget: refused, its thread left to finish the count.
      expect(await outcome(own.all(HEAVY, [], { scan: true }))).toBe('BUSY');
      // A second scan (another statement: the same one would wait for the first's answer) waits for
      // that thread to end (and is refused at its budget); a read beside it answers.
      const second = outcome(own.all(heavy(20_000_001), [], { scan: true }));
      expect(await own.all('SELECT v FROM t WHERE k = ?', ['b'])).toEqual([{ v: 2 }]);
      expect(await second).toBe('BUSY');
    } finally {
      await own.close();
    }
  });
});
