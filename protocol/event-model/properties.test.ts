// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { cleanProperties } from './properties.js';

describe('cleanProperties()', () => {
  it('copies scalars and leaves the source alone', () => {
    const source = { a: 'x', b: 1, c: true, d: null, e: undefined };
    const copy = cleanProperties(source);
    expect(copy).toEqual(source);
    expect(copy).not.toBe(source);
  });

  it('makes every value structured-cloneable', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const copy = cleanProperties({
      fn: () => 1,
      sym: Symbol('s'),
      big: 10n,
      date: new Date(0),
      nested: { plan: 'pro' },
      cyclic,
      node: document.createElement('div'),
    });
    expect(copy).toEqual({ big: '10', date: '"1970-01-01T00:00:00.000Z"', nested: '{"plan":"pro"}', cyclic: undefined, node: '{}' });
    expect(() => structuredClone(copy)).not.toThrow();
  });

  it('copies own properties only, of class instances and arrays too', () => {
    class Plan {
      name = 'pro';
      get price(): number {
        return 10;
      }
    }
    expect(cleanProperties(new Plan())).toEqual({ name: 'pro' });
    expect(cleanProperties(['a', 1])).toEqual({ 0: 'a', 1: 1 });
    const inherited = Object.assign(Object.create({ nested: { x: 1 }, flat: 'p' }) as object, { own: 1 });
    expect(cleanProperties(inherited)).toEqual({ own: 1 });
  });

  it('ignores non-objects and __proto__', () => {
    expect(cleanProperties(undefined)).toBeUndefined();
    expect(cleanProperties('x')).toBeUndefined();
    const copy = cleanProperties(JSON.parse('{"__proto__":{"polluted":1},"ok":1}'));
    expect(copy).toEqual({ ok: 1 });
    expect(Object.hasOwn(copy!, '__proto__')).toBe(false);
    expect(Object.hasOwn(cleanProperties(JSON.parse('{"__proto__":"text","ok":1}'))!, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
