import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/*
 * Backup and restore of a SQLite database (CLI `backup --to FILE`, `restore --from FILE`; README,
 * "Backups"). A database in WAL mode cannot be copied with `cp` while
 * a server writes it: the file alone misses what the WAL holds, and a copy taken mid-checkpoint is
 * torn. SQLite's online backup copies a consistent snapshot through a connection of its own while
 * the server keeps writing.
 */

/** What {@link backupSqliteDatabase} copied. */
export interface BackupResult {
  /** Pages of the copy. */
  pages: number;
  /** Events in the copy. */
  events: number;
}

/**
 * Copies the database at `path` into the new file `to` with SQLite's online backup, while other
 * connections (a running server) go on writing. The copy is one snapshot: after a first empty step
 * every page is copied in a single step, inside one read transaction, so no write of another
 * connection can restart it halfway (which, step by step under steady ingest, could go on for ever).
 * @throws Error when `to` exists already (a backup never overwrites), or `path` is not a database
 */
export async function backupSqliteDatabase(path: string, to: string): Promise<BackupResult> {
  if (existsSync(to)) throw new Error(`${to} exists already; a backup goes to a new file.`);
  // Read-write, though it only reads: a read-only connection to a WAL database can neither
  // checkpoint nor remove the -wal and -shm files it makes, and a -wal left beside a stopped
  // server's database would look like a server still running to `restore`.
  const source = new Database(path, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    const { totalPages } = await source.backup(to, { progress: () => 0x7fffffff });
    // The copy stands alone: one file in rollback-journal mode, no -wal to travel with it (a
    // server that opens it sets WAL again).
    const copy = new Database(to);
    try {
      copy.pragma('journal_mode = DELETE');
      const events = (copy.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      return { pages: totalPages, events };
    } finally {
      copy.close();
    }
  } finally {
    source.close();
  }
}

/** Options of {@link restoreSqliteDatabase}. */
export interface RestoreOptions {
  /**
   * Restore even though `path` has a WAL file beside it, the sign of a server that still has it
   * open (or stopped without closing). @default false
   */
  force?: boolean;
}

/** What {@link restoreSqliteDatabase} did. */
export interface RestoreResult {
  events: number;
  /** Where the database that was at `path` went (kept, never deleted); null when there was none. */
  previous: string | null;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts the backup `from` in place of the database at `path`, with the server stopped: the backup is
 * checked first (SQLite's `integrity_check`, and that it holds this product's tables), copied beside
 * `path`, synced, then renamed over it, so a crash leaves the old database or the new one. The old
 * database is kept as `<path>.before-restore-<time>`.
 * @throws Error for a backup that is not a sound database of ours, or a database still in use
 */
export function restoreSqliteDatabase(from: string, path: string, options: RestoreOptions = {}, now: number = Date.now()): RestoreResult {
  if (existsSync(`${path}-wal`) && options.force !== true) {
    throw new Error(`${path}-wal exists: a server may still have the database open. Stop it, then restore again (--force restores anyway).`);
  }
  const staged = `${path}.restoring-${now}`;
  const backup = new Database(from, { readonly: true, fileMustExist: true });
  let events: number;
  try {
    const integrity = backup.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new Error(`${from} is damaged (integrity_check: ${String(integrity)}); nothing was restored.`);
    const tables = backup.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('events', 'projects', 'api_keys')").all();
    if (tables.length !== 3) throw new Error(`${from} is not a service-analytics database (no events, projects and api_keys tables); nothing was restored.`);
    events = (backup.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
    // Written by SQLite from what it just checked, WAL included: a copy of the file alone would
    // miss the transactions a -wal beside it still holds.
    backup.prepare('VACUUM INTO ?').run(staged);
  } finally {
    backup.close();
  }
  fsyncPath(staged);
  let previous: string | null = null;
  if (existsSync(path)) {
    // A second name for the old file first, then one atomic rename over the path: at every moment
    // the path holds the old database or the new one.
    previous = `${path}.before-restore-${now}`;
    linkSync(path, previous);
  }
  renameSync(staged, path);
  // What a WAL or shared-memory file beside the path held belongs to the database moved away.
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(`${path}${suffix}`)) {
      if (previous !== null) renameSync(`${path}${suffix}`, `${previous}${suffix}`);
      else rmSync(`${path}${suffix}`);
    }
  }
  fsyncPath(dirname(path));
  return { events, previous };
}
