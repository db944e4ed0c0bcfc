import { describe, expect, it } from 'vitest';
import { MAX_KEYS, formatArgs } from './format-value.js';

describe('formatArgs(args, maxLength)', () => {
  it('writes arguments as the console does: strings as they are, values as literals, separated by spaces', () => {
    expect(formatArgs(['total', 3, true, null, undefined, { a: 'x', b: [1, 2] }], 1000).text).toBe('total 3 true null undefined {a: "x", b: [1, 2]}');
  });

  it('applies format specifiers to a first string; %c takes its style and writes nothing', () => {
    expect(formatArgs(['%cHello %s, %d items (%o)', 'color: red', 'Ann', 4.7, { n: 1 }, 'rest'], 1000).text).toBe('Hello Ann, 4 items ({n: 1}) rest');
  });

  it('bounds depth, width and length, and survives cycles and throwing getters', () => {
    const deep = { a: { b: { c: { d: 1 } } } };
    expect(formatArgs([deep], 1000).text).toBe('{a: {b: {c: {…}}}}');
    const wide = Object.fromEntries(Array.from({ length: MAX_KEYS + 5 }, (_, i) => [`k${i}`, i]));
    expect(formatArgs([wide], 1000).text.endsWith(', …}')).toBe(true);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(formatArgs([cyclic], 1000).text).toBe('{name: "loop", self: [Circular]}');
    const hostile = Object.defineProperty({}, 'boom', { enumerable: true, get: () => { throw new Error('no'); } });
    expect(formatArgs([hostile], 1000).text).toBe('{boom: [unreadable]}');
    const long = formatArgs(['x'.repeat(5000)], 100);
    expect(long).toEqual({ text: 'x'.repeat(100), truncated: true });
  });

  it('writes an error by its header and an element by its tag, id and class, never its text', () => {
    const element = document.createElement('button');
    element.id = 'pay';
    element.className = 'primary';
    element.textContent = 'private text';
    expect(formatArgs([new TypeError('bad'), element], 1000).text).toBe('TypeError: bad <button id="pay" class="primary">');
  });
});
