import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportQuery } from '../api/reports.js';
import { useComparison } from './use-comparison.js';

afterEach(cleanup);

/** A load whose answers the test gives by hand, in any order. */
function manualLoad() {
  const calls: Array<{ query: ReportQuery; signal: AbortSignal; resolve: (n: number) => void; reject: (e: unknown) => void }> = [];
  const load = (query: ReportQuery, signal: AbortSignal) =>
    new Promise<number>((resolve, reject) => {
      calls.push({ query, signal, resolve, reject });
    });
  return { load, calls };
}

const query: ReportQuery = { from: 10_000, to: 16_000, filters: { device: 'mobile' } };

describe('useComparison(load, query, deps)', () => {
  it('asks for the previous period (as long, just before, same filters) only once the current answer is there', async () => {
    const { load, calls } = manualLoad();
    const { result } = renderHook(() => useComparison(load, query, [query]));
    expect(calls.map((c) => c.query)).toEqual([query]);
    expect(result.current).toEqual({ current: { state: 'loading' }, previous: { state: 'loading' } });

    await act(async () => calls[0]!.resolve(7));
    expect(result.current.current).toEqual({ state: 'ready', value: 7, refreshing: false });
    expect(result.current.previous).toEqual({ state: 'loading' });
    expect(calls.map((c) => c.query)).toEqual([query, { from: 4_000, to: 10_000, filters: { device: 'mobile' } }]);

    await act(async () => calls[1]!.resolve(5));
    expect(result.current.previous).toEqual({ state: 'ready', value: 5, refreshing: false });
  });

  it('asks nothing more when the current answer failed', async () => {
    const { load, calls } = manualLoad();
    const { result } = renderHook(() => useComparison(load, query, [query]));
    await act(async () => calls[0]!.reject(new Error('The server could not be reached.')));
    expect(result.current.current).toEqual({ state: 'error', message: 'The server could not be reached.' });
    expect(calls).toHaveLength(1);
  });

  it('drops both loads of an old question: its late answers never show', async () => {
    const { load, calls } = manualLoad();
    const later: ReportQuery = { from: 20_000, to: 26_000, filters: {} };
    const { result, rerender } = renderHook(({ q }) => useComparison(load, q, [q]), { initialProps: { q: query } });
    await act(async () => calls[0]!.resolve(1));
    rerender({ q: later });
    expect(calls[1]!.signal.aborted).toBe(true);
    await act(async () => calls[1]!.resolve(99));
    expect(result.current).toEqual({ current: { state: 'loading' }, previous: { state: 'loading' } });
    await act(async () => calls[2]!.resolve(3));
    expect(calls[2]!.query).toEqual(later);
    expect(result.current.current).toEqual({ state: 'ready', value: 3, refreshing: false });
  });
});
