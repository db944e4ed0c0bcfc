/** Fetches `abTestConfig.experimentsUrl`: one GET with a timeout. */
import type { Timers } from '../../protocol/worker/timers.js';

/** Options of {@link fetchExperiments}. */
export interface FetchExperimentsOptions {
  fetch(url: string, init: RequestInit): Promise<Response>;
  timers: Timers;
  /** Milliseconds before the request is aborted. */
  timeoutMs: number;
}

/**
 * GETs `url` and resolves with its JSON body when it is an array; rejects on a network error, a
 * non-2xx status, a body that is not a JSON array, or after `timeoutMs`.
 * @returns the result and a function that aborts the request.
 */
export function fetchExperiments(url: string, options: FetchExperimentsOptions): { result: Promise<unknown[]>; abort(): void } {
  const controller = new AbortController();
  const timer = options.timers.setTimeout(() => controller.abort(), options.timeoutMs);
  const result = options
    .fetch(url, { signal: controller.signal, headers: { Accept: 'application/json' } })
    .then(async (response) => {
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body: unknown = await response.json();
      if (!Array.isArray(body)) throw new Error('the body is not a JSON array');
      return body as unknown[];
    })
    .finally(() => options.timers.clearTimeout(timer));
  return { result, abort: () => controller.abort() };
}
