/**
 * The one set of property rules, used at the call and on the wire. The facade copies the
 * properties a host app passes at the call ({@link cleanProperties}): a copy, because the events
 * are posted at the end of the task and the app may mutate its object in between; and cleaned,
 * because one non-cloneable value (a function, a DOM node) would make the post of the whole task's
 * events throw a DataCloneError. The wire mapping (`event-mapping.ts`) applies the same
 * {@link wireValue} to whatever reaches it.
 */
import type { PropertyValue } from '../wire-types.js';
import type { EventProperties } from './analytics-event.js';

/**
 * The one rule for a property value on the wire: strings and booleans as they are, finite numbers
 * as they are and other numbers as null (JSON has no NaN or Infinity, and the server refuses them),
 * bigints as their digits, null as null, other objects (dates, nested objects, subscription traits)
 * as their JSON text. `undefined` is returned for what has no wire form: undefined, functions,
 * symbols and values JSON cannot encode (a cyclic object).
 */
export function wireValue(value: unknown): PropertyValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    case 'object':
      return value === null ? null : encode(value);
    default:
      return undefined;
  }
}

/**
 * Returns a shallow copy of `source` holding only wire values ({@link wireValue}), `undefined`
 * kept as it is; `__proto__` is never copied.
 */
export function cleanProperties(source: unknown): EventProperties | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  // The engine's own copy (own enumerable properties), then a pass that fixes the rare value with
  // no wire form: much faster per call than building the copy key by key, and this runs on the
  // page's main thread for every event (the per-call cost is in bench/RESULTS.md).
  const out = { ...source } as Record<string, unknown>;
  for (const key in out) {
    const value = out[key];
    const type = typeof value;
    if (key !== '__proto__' && (type === 'string' || type === 'boolean' || type === 'undefined' || (type === 'number' && Number.isFinite(value)))) continue;
    if (!Object.hasOwn(out, key)) continue; // Enumerable on a prototype: not copied.
    const wire = key === '__proto__' ? undefined : wireValue(value);
    if (wire === undefined) delete out[key];
    else out[key] = wire;
  }
  return out as EventProperties;
}

function encode(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // Cyclic: drop this value, keep the event.
  }
}
