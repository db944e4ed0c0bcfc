/**
 * When an acknowledged write is safe, on SQLite: `full` (the default) syncs SQLite's WAL to disk at
 * every commit, once per group commit, so an acknowledged event survives a power cut or an
 * operating-system crash; `relaxed`, the explicit opt-out, syncs only at checkpoints, so an
 * acknowledged event survives a crash of the server process but not of the machine (its cost is in
 * bench/RESULTS.md). PostgreSQL ignores it: there a commit is as durable as the database server's
 * own settings make it, fsync'd before it returns with `synchronous_commit` on, its default.
 */
export type Durability = 'full' | 'relaxed';

/** Every {@link Durability}, in the order the CLI's help names them. */
export const DURABILITIES: readonly Durability[] = ['full', 'relaxed'];

/** The durability of a store opened without one. */
export const DEFAULT_DURABILITY: Durability = 'full';

/**
 * SQLite's `synchronous` setting for a durability. In WAL mode FULL syncs the WAL at every commit
 * and NORMAL only at checkpoints; a crash of the process loses nothing under either.
 */
export function sqliteSynchronous(durability: Durability): 'FULL' | 'NORMAL' {
  return durability === 'relaxed' ? 'NORMAL' : 'FULL';
}
