import {
  type Infer,
  array,
  boolean,
  define,
  integer,
  max,
  min,
  nullable,
  number,
  optional,
  refine,
  size,
  string,
  type,
  unknown,
} from 'superstruct';
import { LIMITS } from './limits.js';
import type { RecordedEvent, SameType } from './wire-types.js';

/** The limits a recording chunk is checked against. */
export interface RecordingLimits {
  maxEvents: number;
  maxDataDepth: number;
  maxStartUrlLength: number;
  maxIdLength: number;
}

/** The wire contract's recording limits ({@link LIMITS}). */
export const RECORDING_LIMITS: RecordingLimits = {
  maxEvents: LIMITS.maxRecordedEventsPerChunk,
  maxDataDepth: LIMITS.maxRecordedDataDepth,
  maxStartUrlLength: LIMITS.maxStartUrlLength,
  maxIdLength: LIMITS.maxIdLength,
};

/**
 * Why a recorded event's `data` cannot be stored, or null: nested deeper than `maxDepth`, or a
 * number that is not finite (`1e999` parses to Infinity, which JSON would store as null).
 * Iterative, so hostile input cannot overflow the stack.
 *
 * Self-contained (it refers to nothing outside its own body): the server runs it on a parser
 * thread from its source text (`server/recording-parser.ts`).
 */
export function recordedDataProblem(data: unknown, maxDepth: number): string | null {
  if (typeof data === 'number') return Number.isFinite(data) ? null : 'a number is not finite';
  if (typeof data !== 'object' || data === null) return null;
  const values: unknown[] = [data];
  const depths: number[] = [1];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (depth > maxDepth) return `nested deeper than ${maxDepth} levels`;
    const children = Array.isArray(value) ? value : Object.values(value as object);
    for (let i = 0; i < children.length; i++) {
      const child: unknown = children[i];
      if (typeof child === 'number') {
        if (!Number.isFinite(child)) return 'a number is not finite';
      } else if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

/**
 * Why `value` is not a recording chunk, naming the field
 * (`events.3.type: expected an integer, got string`), or null when it is one.
 *
 * The one check of a chunk: the same rules as {@link RecordingUploadStruct}, plus finite numbers
 * and bounded nesting everywhere in `data`. Self-contained like {@link recordedDataProblem}, which
 * it takes as a parameter, so the server can run both on its parser thread.
 */
export function recordingUploadProblem(
  value: unknown,
  limits: RecordingLimits,
  dataProblem: (data: unknown, maxDepth: number) => string | null = recordedDataProblem,
): string | null {
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `expected a recording chunk object, got ${kind(value)}`;
  const u = value as Record<string, unknown>;
  const events = u.events;
  if (!Array.isArray(events)) return `events: expected an array, got ${kind(events)}`;
  if (events.length > limits.maxEvents) return `events: at most ${limits.maxEvents} recorded events per chunk, got ${events.length}`;
  for (let i = 0; i < events.length; i++) {
    const e: unknown = events[i];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return `events.${i}: expected a recorded event object, got ${kind(e)}`;
    const event = e as Record<string, unknown>;
    if (!Number.isInteger(event.type)) return `events.${i}.type: expected an integer, got ${kind(event.type)}`;
    if (!Object.hasOwn(event, 'data')) return `events.${i}.data: required`;
    if (!finite(event.timestamp)) return `events.${i}.timestamp: expected a finite number of ms, got ${kind(event.timestamp)}`;
    if (event.delay !== undefined && !finite(event.delay)) return `events.${i}.delay: expected a finite number, got ${kind(event.delay)}`;
    const problem = dataProblem(event.data, limits.maxDataDepth);
    if (problem !== null) return `events.${i}.data: ${problem}`;
  }
  if (!finite(u.duration) || u.duration < 0) return `duration: expected a finite number of seconds, 0 or more`;
  if (!Number.isSafeInteger(u.event_offset) || (u.event_offset as number) < 0) return 'event_offset: expected a whole number, 0 or more';
  if (u.is_final !== undefined && typeof u.is_final !== 'boolean') return `is_final: expected a boolean, got ${kind(u.is_final)}`;
  const url = u.start_url;
  if (url !== undefined && url !== null && (typeof url !== 'string' || url.length > limits.maxStartUrlLength)) {
    return `start_url: expected a string of at most ${limits.maxStartUrlLength} characters`;
  }
  const user = u.user_id;
  if (user !== undefined && user !== null && (typeof user !== 'string' || user.length === 0 || user.length > limits.maxIdLength)) {
    return `user_id: expected a string of 1 to ${limits.maxIdLength} characters`;
  }
  return null;
}

const FiniteNumber = refine(number(), 'FiniteNumber', (n) => Number.isFinite(n) || 'expected a finite number');

/** One rrweb event as recorded. `data` is required but may be anything. */
export const RecordedEventStruct = refine(
  type({
    type: integer(),
    data: refine(unknown(), 'RecordedData', (data) => recordedDataProblem(data, LIMITS.maxRecordedDataDepth) ?? true),
    timestamp: FiniteNumber,
    delay: optional(FiniteNumber),
  }),
  'RecordedEvent',
  (event) => Object.hasOwn(event, 'data') || 'data is required',
);

// The plain type lives in wire-types.ts (the client's declarations name no superstruct type).
export type { RecordedEvent } from './wire-types.js';
/** Compile-time: the struct validates exactly `RecordedEvent`. */
const recordedEventMatches: SameType<Infer<typeof RecordedEventStruct>, RecordedEvent> = true;
void recordedEventMatches;

/**
 * The body of `POST /api/v1/sessions/:sessionId/recordings` (the recording upload payload):
 * the schema the types derive from. {@link recordingUploadProblem} checks the same rules in one pass.
 */
export const RecordingUploadStruct = type({
  events: size(array(RecordedEventStruct), 0, LIMITS.maxRecordedEventsPerChunk),
  duration: min(FiniteNumber, 0),
  start_url: optional(nullable(size(string(), 0, LIMITS.maxStartUrlLength))),
  user_id: optional(nullable(size(string(), 1, LIMITS.maxIdLength))),
  is_final: optional(boolean()),
  event_offset: max(min(integer(), 0), Number.MAX_SAFE_INTEGER),
});

/** One chunk of a session recording. */
export type RecordingUpload = Infer<typeof RecordingUploadStruct>;

/** True when `value` is a recording chunk the server stores. */
export function isRecordingUpload(value: unknown): value is RecordingUpload {
  return recordingUploadProblem(value, RECORDING_LIMITS) === null;
}

/** The lean struct over {@link isRecordingUpload}. */
export const RecordingUploadLean = define<RecordingUpload>('RecordingUpload', isRecordingUpload);

/** Explains why `value` is not a recording chunk, naming the field, e.g. `events.3.type: …`. */
export function explainInvalidRecording(value: unknown): string {
  return recordingUploadProblem(value, RECORDING_LIMITS) ?? 'invalid recording chunk';
}
