import { spawn } from 'node:child_process';
import { projectRoot } from '../browser/client-build.js';
import { bundleScript } from '../server/cli-process.js';

const ROOT = projectRoot();

/**
 * Bundles `open-store.ts` into a private folder under node_modules/.cache and returns the
 * bundle's path. The tests run the bundle with node
 * directly, not through `scripts/run-ts.mjs`: that one runs the script in a second process, which a
 * SIGKILL of the first would leave running.
 */
export function buildOpenStore(): Promise<string> {
  return bundleScript('test-support/upgrades/open-store.ts', 'sa-upgrade-');
}

/** How one run of the child ended. */
export interface KilledOpen {
  /** Whether the SIGKILL came before the child finished (false: it opened and closed the store in time). */
  killed: boolean;
  /** Whether it printed `opened`: `init()` had completed before the kill. */
  opened: boolean;
  /** What it wrote to stdout and stderr. */
  output: string;
}

/** Options of {@link openAndKill}. */
export interface OpenAndKillOptions {
  /** The bundle of {@link buildOpenStore}. */
  script: string;
  /** Its arguments: `['sqlite', path]` or `['postgres', url]`. */
  args: readonly string[];
  /** Milliseconds from the child's `opening` line (or from `killWhen` resolving) to its SIGKILL. */
  killAfterMs: number;
  /**
   * Called once the child printed `opening`; the kill waits for its promise (e.g. until the child
   * is seen waiting on a lock the test holds, inside its migration), and the child is killed at once
   * if it rejects.
   */
  killWhen?: () => Promise<void>;
  /** Bound on the whole run, after which the child is killed and the promise rejects. @default 30000 */
  timeoutMs?: number;
}

/**
 * Runs the child that opens a store with the current code and SIGKILLs it `killAfterMs` after it
 * started `init()`: a process killed part-way through an upgrade, as by the OOM killer or a
 * `systemctl restart` that gave up waiting. Resolves once the process is gone.
 */
export function openAndKill(options: OpenAndKillOptions): Promise<KilledOpen> {
  const child = spawn(process.execPath, [options.script, ...options.args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let killTimer: NodeJS.Timeout | undefined;
  let whenFailed: Error | null = null;
  return new Promise<KilledOpen>((resolve, reject) => {
    const bound = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child did not end within ${options.timeoutMs ?? 30_000} ms:\n${output}`));
    }, options.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => {
      const before = output;
      output += d.toString();
      if (!before.includes('opening\n') && output.includes('opening\n')) {
        const kill = () => {
          killTimer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
        };
        if (options.killWhen === undefined) kill();
        else
          options.killWhen().then(kill, (error: unknown) => {
            whenFailed = error instanceof Error ? error : new Error(String(error));
            child.kill('SIGKILL');
          });
      }
    });
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (error) => {
      clearTimeout(bound);
      clearTimeout(killTimer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      clearTimeout(killTimer);
      if (whenFailed !== null) {
        reject(new Error(`the moment to kill never came: ${whenFailed.message}\n${output}`, { cause: whenFailed }));
        return;
      }
      if (signal !== 'SIGKILL' && code !== 0) {
        reject(new Error(`the child failed (exit ${code}, signal ${signal}) instead of being killed or opening the store:\n${output}`));
        return;
      }
      resolve({ killed: signal === 'SIGKILL', opened: output.includes('opened\n'), output });
    });
  });
}
