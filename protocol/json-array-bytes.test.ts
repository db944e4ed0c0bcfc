import { describe, expect, it } from 'vitest';
import { createJsonArrayBytes } from './json-array-bytes.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('createJsonArrayBytes()', () => {
  it('gives any run of consecutive texts as a JSON array, every character exact, past its first buffer', () => {
    const json = createJsonArrayBytes(8);
    const values = Array.from({ length: 50 }, (_, i) => ({ i, s: `café 東京 🚀 \u2028 "q" \\ ${'x'.repeat(i)}` }));
    const starts: number[] = [];
    const ends: number[] = [];
    let start = 0;
    for (const value of values) {
      starts.push(start);
      ends.push(json.push(JSON.stringify(value)));
      start = ends.at(-1)! + 1;
    }
    expect(JSON.parse(text(json.array(0, ends[49]!)))).toEqual(values);
    expect(JSON.parse(text(json.array(starts[10]!, ends[19]!)))).toEqual(values.slice(10, 20));
    expect(JSON.parse(text(json.array(starts[7]!, ends[7]!)))).toEqual([values[7]]);
  });

  it('counts UTF-8 bytes: the array of texts is its brackets, their bytes and the commas between', () => {
    const json = createJsonArrayBytes();
    const a = JSON.stringify('é');
    const b = JSON.stringify('🚀');
    expect(json.push(a)).toBe(4);
    const end = json.push(b);
    expect(end).toBe(4 + 1 + 6);
    expect(json.array(0, end)).toHaveLength(end + 2);
    expect(text(json.array(0, end))).toBe(`[${a},${b}]`);
  });
});
