/**
 * A bare Chrome DevTools Protocol client over `--remote-debugging-pipe`, for measuring a page's
 * main thread without a test driver's instrumentation.
 *
 * Why not playwright's page: playwright enables the Network, Page, Runtime, Log and Emulation
 * domains on every page and on every worker it auto-attaches to. With the Network domain on, the
 * renderer reports every request, including each fetch a dedicated worker makes, to the DevTools
 * session through the page's main thread; in the client benchmark that instrumentation was most of
 * the page's main-thread time after a burst (bench/RESULTS.md, "Client main thread", notes). A
 * page made here has no domain enabled except what the caller sends, and no auto-attach, so its
 * workers are not instrumented at all.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** A CDP error answer, with the method that got it. */
export class CdpError extends Error {
  constructor(method: string, message: string) {
    super(`${method}: ${message}`);
    this.name = 'CdpError';
  }
}

type Params = Record<string, unknown>;
type EventListener = (params: Params, sessionId: string | undefined) => void;

/** One CDP connection to a browser. */
export interface CdpBrowser {
  /** Browser version string (`Browser.getVersion` product). */
  readonly version: string;
  /** Sends a command to the browser (no `sessionId`) or to an attached target. */
  send<T = Params>(method: string, params?: Params, sessionId?: string): Promise<T>;
  /** Listens to an event; returns the remover. */
  on(method: string, listener: EventListener): () => void;
  /** Opens `url` in a fresh browser context and attaches to it (flat session). */
  newPage(url: string): Promise<CdpPage>;
  close(): Promise<void>;
}

/** One page target, attached with a flat session, no domain enabled. */
export interface CdpPage {
  readonly sessionId: string;
  send<T = Params>(method: string, params?: Params): Promise<T>;
  /**
   * Evaluates `fn(arg)` in the page (awaiting a returned promise) and returns the value by JSON
   * value; a page exception rejects.
   */
  evaluate<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R>;
  /** Polls `predicate` in the page until it returns true. */
  waitFor(predicate: () => boolean, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link launchCdpBrowser}. */
export interface LaunchCdpOptions {
  executablePath: string;
  /** Flags after `--headless --remote-debugging-pipe`. */
  args: readonly string[];
}

/** Starts headless Chromium with a DevTools pipe (fds 3 and 4) and connects to it. */
export async function launchCdpBrowser(options: LaunchCdpOptions): Promise<CdpBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'sa-cdp-profile-'));
  const child: ChildProcess = spawn(
    options.executablePath,
    ['--headless', '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, ...options.args, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;

  let nextId = 1;
  const pending = new Map<number, { method: string; resolve: (value: Params) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<EventListener>>();
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exit.then(() => {
    exited = true;
    for (const { method, reject } of pending.values()) reject(new CdpError(method, `the browser exited\n${stderr}`));
    pending.clear();
  });

  let buffered = '';
  fromBrowser.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\0'); end >= 0; end = buffered.indexOf('\0')) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      dispatch(JSON.parse(text) as { id?: number; method?: string; params?: Params; result?: Params; error?: { message: string }; sessionId?: string });
    }
  });

  function dispatch(message: { id?: number; method?: string; params?: Params; result?: Params; error?: { message: string }; sessionId?: string }): void {
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      if (call === undefined) return;
      pending.delete(message.id);
      if (message.error !== undefined) call.reject(new CdpError(call.method, message.error.message));
      else call.resolve(message.result ?? {});
      return;
    }
    if (message.method !== undefined) for (const listener of listeners.get(message.method) ?? []) listener(message.params ?? {}, message.sessionId);
  }

  function send<T = Params>(method: string, params: Params = {}, sessionId?: string): Promise<T> {
    if (exited) return Promise.reject(new CdpError(method, 'the browser exited'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { method, resolve: resolve as (value: Params) => void, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`);
    });
  }

  function on(method: string, listener: EventListener): () => void {
    let set = listeners.get(method);
    if (set === undefined) listeners.set(method, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  const { product } = await send<{ product: string }>('Browser.getVersion');

  async function newPage(url: string): Promise<CdpPage> {
    const { browserContextId } = await send<{ browserContextId: string }>('Target.createBrowserContext', { disposeOnDetach: true });
    const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const page: CdpPage = {
      sessionId,
      send: (method, params) => send(method, params, sessionId),
      async evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
        const result = await send<{ result: { value?: unknown }; exceptionDetails?: { text: string; exception?: { description?: string } } }>(
          'Runtime.evaluate',
          { expression: `(${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)})`, awaitPromise: true, returnByValue: true },
          sessionId,
        );
        if (result.exceptionDetails !== undefined) {
          throw new Error(`page: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`);
        }
        return result.result.value as R;
      },
      async waitFor(predicate, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        while (!(await page.evaluate(predicate).catch(() => false))) {
          if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${predicate.toString()}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      async close() {
        await send('Target.closeTarget', { targetId }).catch(() => undefined);
        await send('Target.disposeBrowserContext', { browserContextId }).catch(() => undefined);
      },
    };
    // Navigate only once attached: the page's whole life is under this session (no domains on).
    await send('Page.navigate', { url }, sessionId);
    return page;
  }

  return {
    version: product,
    send,
    on,
    newPage,
    async close() {
      if (!exited) {
        await send('Browser.close').catch(() => undefined);
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (!exited) child.kill('SIGKILL');
        await exit;
      }
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
