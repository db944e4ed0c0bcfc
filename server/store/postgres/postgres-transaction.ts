import type pg from 'pg';

/**
 * Runs `work` in one transaction on a connection of `pool`, opened with `begin` (`BEGIN`, or
 * `BEGIN READ ONLY` with `SET LOCAL` settings after it): committed when `work` resolves, rolled
 * back when it throws, whose error is passed on. A connection that could not even roll back is
 * destroyed rather than given back to the pool.
 */
export async function inTransaction<T>(pool: pg.Pool, begin: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
