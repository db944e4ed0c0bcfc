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
  validate,
} from 'superstruct';
import { LIMITS } from './limits.js';

/** One rrweb event as recorded (SPEC.md "RecordedEvent"). `data` is required but may be anything. */
export const RecordedEventStruct = refine(
  type({
    type: integer(),
    data: unknown(),
    timestamp: refine(number(), 'FiniteNumber', (n) => Number.isFinite(n)),
    delay: optional(number()),
  }),
  'RecordedEvent',
  (event) => Object.hasOwn(event, 'data') || 'data is required',
);

/** One recorded DOM event. */
export type RecordedEvent = Infer<typeof RecordedEventStruct>;

/** The body of `POST /api/v1/sessions/:sessionId/recordings` (SPEC.md "Recording upload payload"). */
export const RecordingUploadStruct = type({
  events: size(array(RecordedEventStruct), 0, LIMITS.maxRecordedEventsPerChunk),
  duration: min(number(), 0),
  start_url: optional(nullable(size(string(), 0, 4096))),
  user_id: optional(nullable(size(string(), 1, LIMITS.maxIdLength))),
  is_final: optional(boolean()),
  event_offset: max(min(integer(), 0), Number.MAX_SAFE_INTEGER),
});

/** One chunk of a session recording. */
export type RecordingUpload = Infer<typeof RecordingUploadStruct>;

function isRecordedEvent(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    Number.isInteger(e.type) &&
    typeof e.timestamp === 'number' &&
    Number.isFinite(e.timestamp) &&
    Object.hasOwn(e, 'data') &&
    (e.delay === undefined || typeof e.delay === 'number')
  );
}

/** The fast check of a recording chunk, with the same rules as {@link RecordingUploadStruct}. */
export function isRecordingUpload(value: unknown): value is RecordingUpload {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const u = value as Record<string, unknown>;
  const events = u.events;
  if (!Array.isArray(events) || events.length > LIMITS.maxRecordedEventsPerChunk) return false;
  if (typeof u.duration !== 'number' || !(u.duration >= 0)) return false;
  if (!Number.isSafeInteger(u.event_offset) || (u.event_offset as number) < 0) return false;
  if (u.is_final !== undefined && typeof u.is_final !== 'boolean') return false;
  const url = u.start_url;
  if (url !== undefined && url !== null && (typeof url !== 'string' || url.length > 4096)) return false;
  const user = u.user_id;
  if (user !== undefined && user !== null && (typeof user !== 'string' || user.length === 0 || user.length > LIMITS.maxIdLength)) return false;
  for (let i = 0; i < events.length; i++) if (!isRecordedEvent(events[i])) return false;
  return true;
}

/** The lean struct over {@link isRecordingUpload}. */
export const RecordingUploadLean = define<RecordingUpload>('RecordingUpload', isRecordingUpload);

/** Explains why `value` is not a recording chunk, naming the field, e.g. `events.3.type: …`. */
export function explainInvalidRecording(value: unknown): string {
  let error: ReturnType<typeof validate>[0];
  try {
    [error] = validate(value, RecordingUploadStruct);
  } catch {
    // superstruct prints failing values into messages; a deeply nested one overflows the stack.
    return 'invalid recording chunk: a value is nested too deeply';
  }
  if (!error) return 'invalid recording chunk';
  const failure = error.failures()[0] ?? error;
  const path = failure.path.join('.');
  return path ? `${path}: ${failure.message}` : failure.message;
}
