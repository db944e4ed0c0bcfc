import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../browser/client-build.js';

// The repository, also when this file runs bundled under node_modules/.cache (a benchmark).
const ROOT = projectRoot();

/**
 * Bundles a script of the repository (`entry`, relative to its root) for node, the way `npm run
 * build` bundles the CLI, into a new folder `<prefix>…` under node_modules/.cache so its external
 * imports resolve from the project. Returns the path of the bundle.
 */
export async function bundleScript(entry: string, prefix: string): Promise<string> {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outfile = join(mkdtempSync(join(cache, prefix)), basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return outfile;
}

/** Bundles the CLI the way `npm run build` does; returns the path of the script. */
export function buildCli(): Promise<string> {
  return bundleScript('server/cli.ts', 'sa-cli-');
}

/** Runs a CLI command to completion. */
export function runCli(cli: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** A `start` process: resolves once it logged the address it listens on. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote to stderr (its JSON log) so far. */
  log(): string;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
}

/** Starts `service-analytics-server start` on an ephemeral port. */
export function startServerProcess(cli: string, args: string[], env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [cli, 'start', '--port', '0', '--host', '127.0.0.1', ...args], {
    env: { ...process.env, ...env },
    cwd: ROOT,
  });
  let log = '';
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${log}`)), 20_000);
    child.stderr?.on('data', (d: Buffer) => {
      log += d.toString();
      const match = /"msg":"listening","address":"([^"]+)"/.exec(log);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePromise({ child, url: match[1], log: () => log, exited });
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${log}`));
    });
  });
}
