/**
 * Starts Debian's Chromium (`/usr/bin/chromium`) headless through playwright-core, for the browser
 * end-to-end tests (`examples/browser-tests/`) and the client benchmark (`bench/client-bench.ts`).
 * playwright-core brings no browser of its own; `scripts/ensure-system-deps.sh` installs this one.
 */
import { existsSync } from 'node:fs';
import { type Browser, type LaunchOptions, chromium } from 'playwright-core';

/** Where the system Chromium lives; `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags every launch gets. `--no-sandbox` because the tests may run as root (Chromium refuses to
 * start sandboxed as root); the rest keep the browser from reaching the (closed) network on its own
 * and from doing background work that would disturb measurements. playwright gives each launch a
 * fresh temporary profile (`--user-data-dir`).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--disable-gpu',
];

/** Options of {@link launchChromium}. */
export interface LaunchChromiumOptions {
  /** Flags added after {@link CHROMIUM_ARGS}. */
  args?: readonly string[];
  /** Other playwright launch options (headless is the default). */
  launch?: Omit<LaunchOptions, 'executablePath' | 'args'>;
}

/**
 * Launches headless Chromium with {@link CHROMIUM_ARGS}. Close it with `browser.close()`.
 * @throws an Error naming the fix when the Chromium binary is missing
 */
export async function launchChromium(options: LaunchChromiumOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium was not found at ${CHROMIUM_PATH}. Install it with \`bash scripts/ensure-system-deps.sh\` ` +
        '(Debian package "chromium"), or point CHROMIUM_PATH at a Chromium binary.',
    );
  }
  return chromium.launch({
    ...options.launch,
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  });
}
