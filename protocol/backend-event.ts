import {
  type Infer,
  boolean,
  define,
  literal,
  nullable,
  number,
  optional,
  record,
  refine,
  size,
  string,
  type,
  union,
  validate,
} from 'superstruct';
import { isIsoTimestamp, parseIsoTimestamp } from './iso-timestamp.js';
import { LIMITS } from './limits.js';
import type { BackendEvent, SameType } from './wire-types.js';

// The plain types live in wire-types.ts (the client's declarations name no superstruct type).
export type { BackendEvent, PropertyValue } from './wire-types.js';

/**
 * Property names that would reach an object's prototype if someone ever assigned them with
 * `obj[key] = value`; refused outright so no consumer of stored data has to care.
 */
export const FORBIDDEN_PROPERTY_KEYS: ReadonlySet<string> = new Set(['__proto__']);

const FiniteNumber = refine(number(), 'FiniteNumber', (n) => Number.isFinite(n) || 'expected a finite number');

const Id = size(string(), 1, LIMITS.maxIdLength);

const IsoTimestamp = define<string>('IsoTimestamp', (value) =>
  isIsoTimestamp(value) || 'expected an ISO 8601 date-time of a real day and time, such as 2026-11-22T10:00:00.000Z',
);

const PropertyValueStruct = union([
  size(string(), 0, LIMITS.maxPropertyValueLength),
  FiniteNumber,
  boolean(),
  literal(null),
]);

const Properties = refine(
  record(size(string(), 1, LIMITS.maxPropertyKeyLength), PropertyValueStruct),
  'Properties',
  (props) => {
    // superstruct's record() takes arrays as objects; properties are a map.
    if (Array.isArray(props)) return 'expected an object, got array';
    const keys = Object.keys(props);
    if (keys.length > LIMITS.maxPropertyCount) return `at most ${LIMITS.maxPropertyCount} properties are allowed`;
    for (const key of keys) {
      if (FORBIDDEN_PROPERTY_KEYS.has(key)) return `property name "${key}" is not allowed`;
    }
    return true;
  },
);

/**
 * The detailed struct of one backend event (docs/protocol.md, "Backend event"). It names the
 * failing field, so it runs only for events that the lean check refused. Unknown fields are
 * ignored, not refused, so newer clients keep working against an older server.
 */
export const BackendEventStruct = type({
  event_id: optional(nullable(Id)),
  event_type: size(string(), 1, LIMITS.maxEventTypeLength),
  user_id: optional(nullable(Id)),
  session_id: optional(nullable(Id)),
  timestamp: optional(nullable(IsoTimestamp)),
  properties: optional(nullable(Properties)),
  user_agent: optional(nullable(size(string(), 0, LIMITS.maxUserAgentLength))),
  ip_address: optional(nullable(string())),
});

/** Compile-time: the struct validates exactly `BackendEvent`. */
const backendEventMatches: SameType<Infer<typeof BackendEventStruct>, BackendEvent> = true;
void backendEventMatches;

function isOptionalId(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && value.length >= 1 && value.length <= LIMITS.maxIdLength)
  );
}

function isProperties(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  let count = 0;
  for (const key in value) {
    // JSON.parse makes only own, enumerable keys; an inherited one means this is no parsed object.
    if (!Object.hasOwn(value, key)) return false;
    if (++count > LIMITS.maxPropertyCount) return false;
    if (key.length === 0 || key.length > LIMITS.maxPropertyKeyLength || FORBIDDEN_PROPERTY_KEYS.has(key)) return false;
    const v = (value as Record<string, unknown>)[key];
    switch (typeof v) {
      case 'string':
        if (v.length > LIMITS.maxPropertyValueLength) return false;
        break;
      case 'number':
        if (!Number.isFinite(v)) return false;
        break;
      case 'boolean':
        break;
      default:
        if (v !== null) return false;
    }
  }
  return true;
}

/**
 * The fast check of one backend event: the same rules as {@link BackendEventStruct} in one pass
 * with no allocation. Every event of every batch goes through it, so it keeps the common case fast
 * (docs/decisions.md, "Partial batches"; the server's figures in bench/RESULTS.md).
 *
 * @returns the event's `timestamp` in ms since the epoch (null when it has none) for a valid
 * event, undefined for an invalid one: the time is parsed once, here, for the checks and the
 * stored row alike.
 */
export function backendEventTime(value: unknown): number | null | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const e = value as Record<string, unknown>;
  const type = e.event_type;
  if (typeof type !== 'string' || type.length === 0 || type.length > LIMITS.maxEventTypeLength) return undefined;
  if (!isOptionalId(e.event_id) || !isOptionalId(e.user_id) || !isOptionalId(e.session_id)) return undefined;
  const ua = e.user_agent;
  if (ua !== undefined && ua !== null && (typeof ua !== 'string' || ua.length > LIMITS.maxUserAgentLength)) return undefined;
  const ip = e.ip_address;
  if (ip !== undefined && ip !== null && typeof ip !== 'string') return undefined;
  if (!isProperties(e.properties)) return undefined;
  const ts = e.timestamp;
  if (ts === undefined || ts === null) return null;
  if (typeof ts !== 'string') return undefined;
  const time = parseIsoTimestamp(ts);
  return Number.isNaN(time) ? undefined : time;
}

/** True when `value` is a valid backend event ({@link backendEventTime} says how). */
export function isBackendEvent(value: unknown): value is BackendEvent {
  return backendEventTime(value) !== undefined;
}

/** The lean struct: superstruct's entry point over {@link isBackendEvent}. */
export const BackendEventLean = define<BackendEvent>('BackendEvent', isBackendEvent);

/**
 * Explains why `value` is not a backend event, naming the field, e.g.
 * `properties.plan: expected a string, number, boolean or null`.
 */
export function explainInvalidEvent(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `expected an event object, got ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
  }
  let error: ReturnType<typeof validate>[0];
  try {
    [error] = validate(value, BackendEventStruct);
  } catch {
    // superstruct prints the failing value into its message; a hostile, deeply nested value
    // overflows the stack there. The event is invalid either way.
    return 'invalid event: a value is nested too deeply';
  }
  if (!error) return 'invalid event';
  let failure: Pick<typeof error, 'path' | 'type' | 'refinement' | 'value' | 'message'> = error;
  try {
    failure = error.failures()[0] ?? error;
  } catch {
    // failures() makes the later failures' messages too, printing each value: `${value}` throws for
    // an object whose own `toString` is no function. The error itself holds the first failure.
  }
  const path = failure.path.join('.');
  // Refinements and our own defined types carry a message of their own; superstruct's built-in
  // types get one phrased like the rest.
  const message = failure.refinement || failure.type === 'IsoTimestamp' ? failure.message : describeFailure(failure.type, failure.value);
  return path ? `${path}: ${message}` : message;
}

function describeFailure(expected: string, actual: unknown): string {
  const got = actual === null ? 'null' : Array.isArray(actual) ? 'array' : typeof actual;
  if (expected === 'union') return `expected a string, number, boolean or null, got ${got}`;
  if (expected === 'type' || expected === 'record') return `expected an object, got ${got}`;
  return `expected ${expected === 'literal' ? 'null' : `a ${expected}`}, got ${got}`;
}
