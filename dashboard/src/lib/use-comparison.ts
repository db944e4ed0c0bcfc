/**
 * Loads one report for the view's question and then the same report for the previous period (as
 * long, just before, same filters), for the changes on the headline numbers. The previous period
 * is asked only once the current answer has come: the comparison must never hold up the numbers
 * themselves, neither in the browser's few connections nor on the server's read thread.
 */
import { type DependencyList, useEffect, useState } from 'react';
import type { ReportQuery } from '../api/reports.js';
import { previousSpan } from './period-change.js';
import { type Resource, failedResource } from './use-resource.js';

/** The view's answer, and the previous period's (loading until the view's is ready). */
export interface Comparison<T> {
  current: Resource<T>;
  previous: Resource<T>;
}

const LOADING = { state: 'loading' } as const;

/** The previous period's question of `query`. */
export function previousQuery(query: ReportQuery): ReportQuery {
  return { ...previousSpan(query), filters: query.filters };
}

/** Runs `load` for `query`, then for its previous period, again whenever `deps` change (aborting both). */
export function useComparison<T>(load: (query: ReportQuery, signal: AbortSignal) => Promise<T>, query: ReportQuery, deps: DependencyList): Comparison<T> {
  const [comparison, setComparison] = useState<Comparison<T>>({ current: LOADING, previous: LOADING });
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const settle = (promise: Promise<T>): Promise<Resource<T>> =>
      promise.then(
        (value): Resource<T> => ({ state: 'ready', value, refreshing: false }),
        (error: unknown) => failedResource(error),
      );
    setComparison({ current: LOADING, previous: LOADING });
    void settle(load(query, signal)).then(async (current) => {
      if (signal.aborted) return;
      setComparison({ current, previous: LOADING });
      // Without the view's numbers a change has nothing to sit beside: ask nothing more.
      if (current.state !== 'ready') return;
      const previous = await settle(load(previousQuery(query), signal));
      if (!signal.aborted) setComparison({ current, previous });
    });
    return () => controller.abort();
    // The caller's deps decide when `load` is a new question.
  }, deps);
  return comparison;
}
