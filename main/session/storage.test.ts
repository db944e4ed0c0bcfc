import { describe, expect, it } from 'vitest';
import { createSafeStorage } from './storage.js';

const throwing = {
  getItem: () => {
    throw new Error('SecurityError');
  },
  setItem: () => {
    throw new Error('QuotaExceededError');
  },
  removeItem: () => {
    throw new Error('SecurityError');
  },
} as unknown as Storage;

describe('createSafeStorage()', () => {
  it('reads and writes localStorage', () => {
    localStorage.clear();
    const store = createSafeStorage(() => localStorage);
    store.set('k', 'v');
    expect(localStorage.getItem('k')).toBe('v');
    expect(store.get('k')).toBe('v');
    store.remove('k');
    expect(store.get('k')).toBeNull();
  });

  it('falls back to memory when storage throws', () => {
    const store = createSafeStorage(() => throwing);
    store.set('k', 'v');
    expect(store.get('k')).toBe('v');
    store.remove('k');
    expect(store.get('k')).toBeNull();
  });

  it('falls back to memory when reading the storage object itself throws or there is none', () => {
    const a = createSafeStorage(() => {
      throw new Error('denied');
    });
    a.set('k', 'v');
    expect(a.get('k')).toBe('v');
    const b = createSafeStorage(() => undefined);
    b.set('k', 'w');
    expect(b.get('k')).toBe('w');
  });
});
