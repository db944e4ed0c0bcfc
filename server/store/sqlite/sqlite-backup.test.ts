import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoad } from '../../../test-support/load-generator.js';
import { buildCli, runCli } from '../../../test-support/server/cli-process.js';
import { type TestServer, startTestServer } from '../../../test-support/server/test-server.js';
import { openStore } from '../open-store.js';
import type { ReportQuery } from '../report-store.js';

/** The event ids of `path`'s project, read straight from the file. */
function storedIds(path: string, projectId: string): Set<string> {
  const db = new Database(path, { readonly: true });
  try {
    return new Set((db.prepare('SELECT event_id FROM events WHERE project_id = ?').pluck().all(projectId) as string[]));
  } finally {
    db.close();
  }
}

describe('backup --to FILE and restore --from FILE (SQLite)', () => {
  let cli: string;
  let dir: string;
  let server: TestServer | undefined;
  beforeAll(async () => {
    cli = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'sa-backup-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies, while the server ingests, every event acknowledged before the backup began; the copy opens, reports the same and restores', async () => {
    server = await startTestServer('sqlite');
    const { location, project } = server;
    const load = (durationMs: number) => startLoad({ url: server!.url, projectId: project.id, writeKey: project.writeKey, concurrency: 4, batchSize: 20, durationMs });
    const from = Date.now() - 1000;
    const before = await load(1500).done;
    const to = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(before.acknowledged.length).toBeGreaterThan(0);

    // The second run is under way while the backup, another process, copies the file.
    const during = load(4000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const copy = join(dir, 'copy.db');
    const backup = await runCli(cli, ['backup', '--db', location, '--to', copy, '--json']);
    const progressAtEnd = during.progress();
    const after = await during.done;
    expect([backup.code, backup.stderr]).toEqual([0, '']);
    expect(progressAtEnd.acknowledged).toBeGreaterThan(0);
    expect(after.acknowledged.length).toBeGreaterThan(0);

    const inCopy = storedIds(copy, project.id);
    expect(before.acknowledged.filter((id) => !inCopy.has(id))).toEqual([]);
    expect(JSON.parse(backup.stdout)).toMatchObject({ to: copy, events: inCopy.size });

    // The range of the first run only: its reports are the same in the copy as in the original.
    const q: ReportQuery = { projectId: project.id, from, to, filters: {}, includeBots: true, visitorKey: 'anonymous' };
    const copied = openStore(copy);
    await copied.init();
    try {
      const original = await server.store.reports.totals(q);
      expect(original.events).toBe(before.acknowledged.length);
      expect(await copied.reports.totals(q)).toEqual(original);
      expect(await copied.reports.series(q, 3_600_000)).toEqual(await server.store.reports.series(q, 3_600_000));
    } finally {
      await copied.close();
    }

    // Another backup never overwrites a file.
    const again = await runCli(cli, ['backup', '--db', location, '--to', copy]);
    expect([again.code, again.stderr.trim()]).toEqual([1, `${copy} exists already; a backup goes to a new file.`]);

    // While the server has the database open, restore refuses; stopped, it puts the copy in place.
    const busy = await runCli(cli, ['restore', '--db', location, '--from', copy]);
    expect([busy.code, busy.stderr.trim()]).toEqual([1, `${location}-wal exists: a server may still have the database open. Stop it, then restore again (--force restores anyway).`]);
    const all = storedIds(location, project.id).size;
    // Stops the server and closes its database, leaving the file (close() would delete it too).
    await server.running.close();
    const restored = await runCli(cli, ['restore', '--db', location, '--from', copy, '--json']);
    expect([restored.code, restored.stderr]).toEqual([0, '']);
    const { previous, events } = JSON.parse(restored.stdout) as { previous: string; events: number };
    expect(events).toBe(inCopy.size);
    expect(storedIds(location, project.id)).toEqual(inCopy);
    // The database that was there is kept, whole.
    expect(storedIds(previous, project.id).size).toBe(all);
  }, 60_000);

  it('backs up a stopped database and restores it, leaving no -wal behind, and restores what a -wal beside the backup holds', async () => {
    const db = join(dir, 'stopped.db');
    const created = await runCli(cli, ['project', 'create', '--name', 'Stopped', '--db', db, '--json']);
    expect(created.code).toBe(0);
    const copy = join(dir, 'stopped-copy.db');
    expect((await runCli(cli, ['backup', '--db', db, '--to', copy])).code).toBe(0);
    expect([existsSync(`${db}-wal`), existsSync(`${copy}-wal`)]).toEqual([false, false]);
    const restored = await runCli(cli, ['restore', '--db', db, '--from', copy]);
    expect([restored.code, restored.stderr]).toEqual([0, '']);

    // A database whose last rows are still only in its -wal (a writer that never checkpointed).
    const walOnly = join(dir, 'wal-only.db');
    const writer = new Database(walOnly);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec('CREATE TABLE projects (id TEXT); CREATE TABLE api_keys (id TEXT); CREATE TABLE events (event_id TEXT);');
    writer.prepare('INSERT INTO events VALUES (?)').run('in-the-wal');
    expect(existsSync(`${walOnly}-wal`)).toBe(true);
    const target = join(dir, 'from-wal.db');
    const fromWal = await runCli(cli, ['restore', '--db', target, '--from', walOnly, '--json']);
    writer.close();
    expect([fromWal.code, JSON.parse(fromWal.stdout).events]).toEqual([0, 1]);
    const check = new Database(target, { readonly: true });
    expect(check.prepare('SELECT event_id FROM events').pluck().all()).toEqual(['in-the-wal']);
    check.close();
  });

  it('restores nothing from a file that is no sound database of ours, and names PostgreSQL tools for a PostgreSQL URL', async () => {
    const target = join(dir, 'target.db');
    const notDb = join(dir, 'not.db');
    writeFileSync(notDb, 'not a database at all, just text that is long enough to be read as a header');
    const refused = await runCli(cli, ['restore', '--db', target, '--from', notDb]);
    expect(refused.code).toBe(1);
    expect(existsSync(target)).toBe(false);
    const other = join(dir, 'other.db');
    new Database(other).exec('CREATE TABLE t (x)').close();
    const foreign = await runCli(cli, ['restore', '--db', target, '--from', other]);
    expect([foreign.code, foreign.stderr.trim()]).toEqual([1, `${other} is not a service-analytics database (no events, projects and api_keys tables); nothing was restored.`]);
    expect(existsSync(target)).toBe(false);
    const pg = await runCli(cli, ['backup', '--database-url', 'postgres://127.0.0.1:1/x', '--to', join(dir, 'pg.dump')]);
    expect([pg.code, pg.stderr.split('\n')[0]]).toEqual([2, 'backup copies a SQLite file; for PostgreSQL use its own tools: pg_dump --format=custom --file FILE "$SA_DATABASE_URL"']);
  });
});
