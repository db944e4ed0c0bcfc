import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, closeSync, constants, existsSync, openSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const execFileAsync = promisify(execFile);

/** A throw-away PostgreSQL server started for one test run. */
export interface PostgresServer {
  /** Superuser URL of the `postgres` database, e.g. `postgres://postgres@127.0.0.1:54123/postgres`. */
  readonly url: string;
  /** Stops the server (`pg_ctl stop -m fast`) and deletes its data directory. */
  stop(): Promise<void>;
}

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /**
   * Directory holding `initdb`, `postgres` and `pg_ctl`.
   * @default `$POSTGRES_BIN_DIR`, else the newest `/usr/lib/postgresql/<version>/bin`, else `PATH`
   */
  binDir?: string;
}

const SERVER_BINARIES = ['initdb', 'postgres', 'pg_ctl'] as const;
const DIR_PREFIX = 'service-analytics-pg-';
/** initdb and postgres refuse to run as root; as root we run them as this account. */
const SERVICE_USER = 'postgres';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function hasServerBinaries(dir: string): boolean {
  return SERVER_BINARIES.every((name) => isExecutable(join(dir, name)));
}

/** Finds the directory of PostgreSQL's server binaries, or throws a message that names the fix. */
export function findPostgresBinDir(): string {
  const candidates: string[] = [];
  const fromEnv = process.env.POSTGRES_BIN_DIR;
  if (fromEnv) candidates.push(fromEnv);
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    // Debian installs each major version side by side; prefer the newest.
    const versions = readdirSync(debianRoot)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debianRoot, v, 'bin'));
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(dir);
  const found = candidates.find(hasServerBinaries);
  if (found) return found;
  throw new Error(
    'PostgreSQL server binaries (initdb, postgres, pg_ctl) were not found in $POSTGRES_BIN_DIR, ' +
      '/usr/lib/postgresql/*/bin or PATH. The PostgreSQL store tests need a real server: run ' +
      '`bash scripts/ensure-system-deps.sh` as root (it installs Debian\'s postgresql package) or ' +
      'install PostgreSQL 15 yourself and set POSTGRES_BIN_DIR to its bin directory.',
  );
}

/** A port that was free a moment ago: bind port 0 on loopback, read the port, release it. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not pick a free port'))));
    });
  });
}

async function accountIds(user: string): Promise<{ uid: number; gid: number }> {
  try {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', user]),
      execFileAsync('id', ['-g', user]),
    ]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  } catch (cause) {
    throw new Error(
      `Running as root, the PostgreSQL test server must run as the "${user}" account, which does not exist. ` +
        'Install Debian\'s postgresql package (it creates the account) or run the tests as a normal user.',
      { cause },
    );
  }
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Deletes data directories of earlier runs that were killed before their teardown (their server
 * died with them, see the parent-death signal below). A directory is left alone while its server
 * runs, and for ten minutes after it was made, so a run that is still starting is never disturbed.
 */
async function removeStaleDirectories(parent: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(parent, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs < 10 * 60_000) continue;
      const pidFile = join(dir, 'data', 'postmaster.pid');
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
      if (pid > 0 && isAlive(pid)) continue;
      await rm(dir, { recursive: true, force: true });
    } catch {
      // Not ours to fuss over: another user's directory, or one removed meanwhile.
    }
  }
}

/** Resolves once the server accepts connections; rejects when it exits or does not come up. */
async function waitUntilReady(child: ChildProcess, port: number, logPath: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited during start-up:\n${tail(logPath)}`);
    }
    const client = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
    }
    if (Date.now() > deadline) throw new Error(`postgres did not accept connections on port ${port}:\n${tail(logPath)}`);
    await sleep(100);
  }
}

/**
 * Starts a private PostgreSQL server on 127.0.0.1 and a free port, with its data in a fresh temp
 * directory. Durability is switched off (`fsync=off`): the data is thrown away after the run.
 * As root, initdb, postgres and pg_ctl run as the `postgres` account, which owns the directory.
 * The server is started with a parent-death signal, so a test run that is killed does not leave
 * it running.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? findPostgresBinDir();
  const asRoot = process.getuid?.() === 0;
  await removeStaleDirectories(tmpdir());
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  try {
    if (asRoot) {
      const { uid, gid } = await accountIds(SERVICE_USER);
      // mkdtemp makes a 0700 root directory; the server account must own it (initdb wants 0700).
      chownSync(dir, uid, gid);
    }
    const dataDir = join(dir, 'data');
    const logPath = join(dir, 'postgres.log');
    const asUser = (command: string, args: string[]): [string, string[]] =>
      asRoot ? ['runuser', ['-u', SERVICE_USER, '--', command, ...args]] : [command, args];

    const run = async (name: string, args: string[]): Promise<void> => {
      const [command, argv] = asUser(join(binDir, name), args);
      try {
        await execFileAsync(command, argv, { cwd: dir });
      } catch (error) {
        const stderr = (error as { stderr?: string }).stderr ?? '';
        throw new Error(`${name} ${args.join(' ')} failed: ${stderr || String(error)}`, { cause: error });
      }
    };

    await run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N']);

    let lastError: unknown;
    // The free port can be taken between probing and binding; a few tries make that harmless.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const logFd = openSync(logPath, 'a');
      const serverArgs = [
        '-D', dataDir,
        '-p', String(port),
        '-c', 'listen_addresses=127.0.0.1',
        '-c', 'unix_socket_directories=',
        '-c', 'fsync=off',
        '-c', 'synchronous_commit=off',
        '-c', 'full_page_writes=off',
        '-c', 'shared_buffers=32MB',
        '-c', 'max_connections=200',
      ];
      const privileges = asRoot ? [`--reuid=${SERVICE_USER}`, `--regid=${SERVICE_USER}`, '--clear-groups'] : [];
      const canSetpriv = isExecutable('/usr/bin/setpriv');
      if (asRoot && !canSetpriv) throw new Error('Running as root needs setpriv (util-linux) to start postgres as the postgres account.');
      const [command, argv] = canSetpriv
        ? ['/usr/bin/setpriv', [...privileges, '--pdeathsig=TERM', '--', join(binDir, 'postgres'), ...serverArgs]]
        : [join(binDir, 'postgres'), serverArgs];
      const child = spawn(command, argv, { cwd: dir, stdio: ['ignore', logFd, logFd] });
      closeSync(logFd);
      child.on('error', () => {});
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      try {
        await waitUntilReady(child, port, logPath);
      } catch (error) {
        lastError = error;
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        // The next try reuses the data directory, so this server must be gone first.
        await exited;
        continue;
      }
      child.unref();
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        async stop() {
          try {
            await run('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w']);
          } catch {
            child.kill('SIGQUIT');
          }
          await exited;
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    throw lastError instanceof Error ? lastError : new Error('postgres did not start');
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
