/**
 * Loads one answer for a panel and keeps its state: loading, ready, failed, or not available on
 * this server (a 404 endpoint). With `refreshMs`, reloads on that period while the tab is visible
 * (and at once when it becomes visible again), keeping the last answer on screen meanwhile.
 */
import { type DependencyList, useEffect, useState } from 'react';
import { isNotAvailable } from '../api/api-error.js';
import { messageOf } from './format.js';

/** A panel's data. */
export type Resource<T> =
  | { state: 'loading' }
  | { state: 'ready'; value: T; refreshing: boolean }
  | { state: 'error'; message: string }
  | { state: 'not-available' };

/** The state of a load that failed with `error`: "not available" for an endpoint this server lacks. */
export function failedResource(error: unknown): Resource<never> {
  return isNotAvailable(error) ? { state: 'not-available' } : { state: 'error', message: messageOf(error) };
}

/** Runs `load` when `deps` change (aborting the previous load) and on the refresh period. */
export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList, refreshMs?: number): Resource<T> {
  const [resource, setResource] = useState<Resource<T>>({ state: 'loading' });
  useEffect(() => {
    let controller = new AbortController();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = (first: boolean): void => {
      controller.abort();
      controller = new AbortController();
      const { signal } = controller;
      if (first) setResource({ state: 'loading' });
      else setResource((r) => (r.state === 'ready' ? { ...r, refreshing: true } : r));
      load(signal).then(
        (value) => {
          if (!signal.aborted) setResource({ state: 'ready', value, refreshing: false });
          schedule();
        },
        (error: unknown) => {
          if (signal.aborted) return;
          setResource(failedResource(error));
          schedule();
        },
      );
    };
    const schedule = (): void => {
      if (refreshMs === undefined || stopped) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (document.visibilityState === 'visible') run(false);
      }, refreshMs);
    };
    const onVisibility = (): void => {
      if (document.visibilityState === 'visible' && refreshMs !== undefined) run(false);
    };
    run(true);
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
      document.removeEventListener('visibilitychange', onVisibility);
    };
    // The caller's deps decide when `load` is a new question.
  }, [...deps, refreshMs]);
  return resource;
}
