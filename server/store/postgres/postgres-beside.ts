import type pg from 'pg';
import type { Beside } from '../reports/rollup-erasure.js';

/**
 * Runs work beside a transaction that is under way, in a transaction of its own on another
 * connection of `pool`, which ends with `end`: `COMMIT` for the store, `ROLLBACK` for the erasure
 * bench (which times the same erasures again). It answers false, and the caller does the work in
 * its own transaction, when no connection comes within `waitMs` (the caller holds one already,
 * and erasures that each waited for a second one could hold every connection of the pool and wait
 * forever) or when the work fails (rolled back; the caller's own try reports the error).
 */
export function besideOn(pool: pg.Pool, end: 'COMMIT' | 'ROLLBACK', waitMs = 100): Beside {
  return async (work) => {
    const connecting = pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    const client = await Promise.race([connecting, late]).catch(() => null);
    clearTimeout(timer);
    if (client === null) {
      // Taken back as soon as it comes.
      connecting.then((c) => c.release(), () => undefined);
      return false;
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query(end);
      return true;
    } catch {
      await client.query('ROLLBACK').catch((error: Error) => {
        broken = error;
      });
      return false;
    } finally {
      client.release(broken);
    }
  };
}
