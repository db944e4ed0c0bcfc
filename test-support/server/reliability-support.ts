/**
 * Helpers of the reliability tests: a database per test of either kind, projects made through the
 * real CLI, and a bounded wait. Test-only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../postgres.js';
import { type ServerProcess, runCli } from './cli-process.js';
import type { StoreKind } from './test-server.js';

/** A project as `project create --json` prints it. */
export interface CliProject {
  projectId: string;
  apiKey: string;
  readKey: string;
}

/** A fresh, empty database location of the given kind. */
export async function freshLocation(kind: StoreKind): Promise<{ location: string; dispose(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sa-rel-'));
    return { location: join(dir, 'analytics.db'), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = await createTestDatabase();
  return { location: db.url, dispose: () => db.drop() };
}

/** The CLI flag that points at `location`. */
export function dbArgs(location: string): string[] {
  return /^postgres(?:ql)?:\/\//.test(location) ? ['--database-url', location] : ['--db', location];
}

/**
 * Creates a project with the CLI and returns its id and keys. It keeps bots: the load generator's
 * and Node's user agents are bots to the default policy (docs/decisions.md, "Bot filtering").
 */
export async function createCliProject(cli: string, location: string, name = 'Reliability'): Promise<CliProject> {
  const out = await runCli(cli, ['project', 'create', '--name', name, '--bots', 'keep', '--json', ...dbArgs(location)]);
  if (out.code !== 0) throw new Error(`project create failed (${out.code}): ${out.stderr}`);
  return JSON.parse(out.stdout) as CliProject;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 50 ms; rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves with the exit code, or with `'timeout'` (after SIGKILLing it) when it takes longer than `ms`. */
export async function exitWithin(server: ServerProcess, ms: number): Promise<number | null | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  const outcome = await Promise.race([server.exited, timeout]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  return outcome;
}

/** Prints one line of figures, prefixed so they are easy to find in CI output. */
export function report(title: string, figures: Record<string, string | number>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k}=${typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : v}`);
  console.log(`[reliability] ${title}: ${parts.join(' ')}`);
}

/** Environment number with a default, for runs made longer by hand. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
