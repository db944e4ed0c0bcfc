import { describe, expect, it } from 'vitest';
import { runRemovers } from './run-removers.js';

describe('runRemovers(removers, onError)', () => {
  it('runs each remover once, in order, past one that throws, and leaves the list empty', () => {
    const ran: string[] = [];
    const errors: unknown[] = [];
    const removers = [() => void ran.push('a'), () => { throw new Error('b'); }, () => void ran.push('c')];
    runRemovers(removers, (error) => errors.push((error as Error).message));
    expect([ran, errors, removers]).toEqual([['a', 'c'], ['b'], []]);
    runRemovers(removers, (error) => errors.push(error));
    expect(ran).toEqual(['a', 'c']);
  });
});
