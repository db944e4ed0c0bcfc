// @vitest-environment node
/**
 * The build's output (scripts/build-client.mjs, in memory): what the main-thread entry must not
 * contain, and the built worker answering the real protocol over comlink. Its size in bytes is
 * checked by the build's size report (`npm run size`), which prints the headroom and fails over
 * the budget.
 */
import { SourceMap } from 'node:module';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../scripts/build-client.mjs';
import { createFakeFetch, postOf, testConfig, uuidEvents } from '../test-support/worker/delivery-fakes.js';
import type { FromWorkerMessage } from '../protocol/worker/worker-contract.js';
import { globalTimers } from './delivery/delivery-options.js';
import type { WorkerLike } from './delivery/transport-options.js';
import { startWorkerLink } from './delivery/delivery-link.js';
import { createDeferredRequest } from './unload/deferred-request.js';

let built: Awaited<ReturnType<typeof buildClient>>;
beforeAll(async () => {
  built = await buildClient();
}, 60_000);

describe('the main-thread entry', () => {
  it('contains neither superstruct, React, rrweb, comlink nor the delivery core', () => {
    const inputs = built.facadeInputs;
    expect(inputs).toContain('main/index.ts');
    for (const banned of ['node_modules/superstruct', 'node_modules/react', 'node_modules/rrweb', 'node_modules/comlink', 'worker/delivery-core.ts', 'protocol/backend-event.ts']) {
      expect(inputs.filter((input) => input.includes(banned))).toEqual([]);
    }
    // Of the delivery core and the wire protocol, only two files of the event model are in the
    // entry: the id text (a few lines, for the facade's rare paths) and the property rules it
    // cleans each call's properties with; the rest loads with the worker or lazily.
    expect(inputs.filter((input) => input.startsWith('worker/') || input.startsWith('protocol/')).sort()).toEqual([
      'protocol/event-model/event-id.ts',
      'protocol/event-model/properties.ts',
    ]);
  });

  it('finds the worker beside itself and carries the inline worker in a lazy chunk', () => {
    const code = [...built.files].filter(([name]) => name.endsWith('.js')).map(([, text]) => text).join('\n');
    expect(code).toContain('new URL("./worker.js",import.meta.url)');
    const inline = [...built.files].find(([name]) => name.startsWith('inline-worker-source-') && name.endsWith('.js'));
    expect(inline).toBeDefined();
    // The worker's source as a string literal (esbuild picks the quotes): look for its markers.
    const source = inline![1];
    expect(source.includes('Comlink.proxy') && source.includes('WorkerGlobalScope')).toBe(true);
    expect(source.length).toBeGreaterThan(built.files.get('worker.js')!.length);
  });
});

describe('the compile hint on the facade', () => {
  it('marks the chunk that holds createAnalytics(), and its source map still points at the sources', () => {
    const [name, text] = [...built.files].find(([file, code]) => file.endsWith('.js') && code.includes('the client was shut down'))!;
    expect(text.startsWith('//# allFunctionsCalledOnLoad\n')).toBe(true);
    const map = new SourceMap(JSON.parse(built.files.get(`${name}.map`)!));
    // A string that appears once in the chunk, found where its source says it is.
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('track() needs an event name'));
    const entry = map.findEntry(line, lines[line]!.indexOf('track() needs an event name'));
    if (!('originalSource' in entry)) throw new Error('no mapping at the string');
    expect(entry.originalSource).toMatch(/main\/create-analytics\.ts$/);
    const source = map.payload.sourcesContent![map.payload.sources.indexOf(entry.originalSource)]!;
    expect(source.split('\n')[entry.originalLine]).toContain('track() needs an event name');
  });

  it('leaves the lazy chunks and the worker unmarked', () => {
    for (const [file, code] of built.files) {
      if (!file.endsWith('.js') || code.includes('the client was shut down')) continue;
      expect(code.startsWith('//# allFunctionsCalledOnLoad'), file).toBe(false);
    }
  });
});

describe('the built worker (worker.js)', () => {
  it('is self-contained: no import statements, no superstruct', () => {
    const worker = built.files.get('worker.js')!;
    expect(worker).not.toMatch(/^import\s|\bimport\s*\(/m);
    expect(built.workerInputs.filter((input) => input.includes('superstruct'))).toEqual([]);
    expect(built.workerInputs.some((input) => input.includes('node_modules/comlink'))).toBe(true);
  });

  it('answers init over comlink and delivers events posted on the data port', async () => {
    const channel = new MessageChannel();
    const server = createFakeFetch();
    // A worker global scope for the built script: its messages are one end of a MessageChannel.
    const scope = {
      WorkerGlobalScope: class {
        static [Symbol.hasInstance](): boolean {
          return true;
        }
      },
      addEventListener: (type: string, listener: EventListener) => channel.port2.addEventListener(type, listener),
      removeEventListener: (type: string, listener: EventListener) => channel.port2.removeEventListener(type, listener),
      postMessage: (message: unknown, transfer?: Transferable[]) => channel.port2.postMessage(message, transfer as never),
      start: () => channel.port2.start(),
      fetch: server.fetch,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      console,
      URL,
      URLSearchParams,
      TextEncoder,
      TextDecoder,
      AbortController,
      Headers,
      Response,
      Request,
      Blob,
      MessageChannel,
      MessagePort,
      structuredClone,
    };
    runInNewContext(built.files.get('worker.js')!, scope);

    const fakeWorker: WorkerLike = {
      postMessage: (message, transfer) => channel.port1.postMessage(message, transfer as never),
      addEventListener: (type, listener) => channel.port1.addEventListener(type, listener),
      removeEventListener: (type, listener) => channel.port1.removeEventListener(type, listener),
      terminate: () => {
        channel.port1.close();
        channel.port2.close();
      },
    };
    channel.port1.start();
    const messages: FromWorkerMessage[] = [];
    const link = await startWorkerLink({
      create: () => fakeWorker,
      config: testConfig(),
      replay: null,
      handlers: { onMessage: (message) => messages.push(message), onDeath: () => {} },
      timers: globalTimers,
      deferred: createDeferredRequest(undefined, () => {}),
      startTimeoutMs: 5000,
      controlTimeoutMs: 5000,
      flushTimeoutMs: 5000,
    });
    expect(link.mode).toBe('worker');
    link.post(postOf(uuidEvents(3)));
    expect(await link.flush(2)).toEqual({ ok: true, sent: 3 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.url).toBe('http://analytics.test/api/v1/events/batch');
    expect((server.requests[0]!.body as unknown[]).length).toBe(3);
    expect(await link.stats()).toMatchObject({ mode: 'worker', sent: 3 });
    await link.shutdown(0);
  });
});
