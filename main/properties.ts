/**
 * Copies the properties a host app passes, at the call. A copy, because the events are posted at
 * the end of the task and the app may mutate its object in between; and cleaned, because one
 * non-cloneable value (a function, a DOM node) would make the post of the whole task's events
 * throw a DataCloneError.
 */
import type { EventProperties } from '../worker/types.js';

/**
 * Returns a shallow copy of `source` holding only wire-safe values: strings, numbers, booleans,
 * null and undefined are kept; bigints become strings; other objects (dates, nested objects,
 * subscription traits) become their JSON text; functions, symbols and values JSON cannot encode
 * are dropped. `__proto__` is never copied.
 */
export function cleanProperties(source: unknown): EventProperties | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const out: EventProperties = {};
  const input = source as Record<string, unknown>;
  for (const key in input) {
    if (key === '__proto__' || !Object.hasOwn(input, key)) continue;
    const value = input[key];
    switch (typeof value) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'undefined':
        out[key] = value;
        break;
      case 'bigint':
        out[key] = value.toString();
        break;
      case 'object':
        out[key] = value === null ? null : encode(value);
        break;
      default:
      // Functions and symbols have no wire form.
    }
  }
  return out;
}

function encode(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // Cyclic: drop this value, keep the event.
  }
}
