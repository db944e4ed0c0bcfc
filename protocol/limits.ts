/**
 * Limits of the wire contract. The server enforces them (defaults of its size options) and the
 * client stays inside them, so a well-behaved client never sees a 413 or a validation error.
 */
export const LIMITS = {
  /** Largest decompressed body of `POST /api/v1/events/batch`, in bytes. */
  maxBatchBodyBytes: 1024 * 1024,
  /** Largest decompressed body of a recording chunk, in bytes (full DOM snapshots are large). */
  maxRecordingBodyBytes: 16 * 1024 * 1024,
  /** Most events in one batch; a longer array is answered 413 PAYLOAD_TOO_LARGE. */
  maxEventsPerBatch: 1000,
  /** Most recorded events in one chunk. */
  maxRecordedEventsPerChunk: 50_000,
  /**
   * Deepest nesting inside one recorded event's `data`. rrweb's snapshots nest two levels per DOM
   * level, so this allows DOM trees 250 deep while keeping JSON work far from the stack limit.
   */
  maxRecordedDataDepth: 500,
  /** Longest `start_url` of a recording chunk. */
  maxStartUrlLength: 4096,
  /** Longest `event_type`. */
  maxEventTypeLength: 200,
  /** Longest `event_id`, `user_id`, `session_id`. */
  maxIdLength: 200,
  /** Longest `user_agent`. */
  maxUserAgentLength: 1024,
  /** Most keys in `properties`. */
  maxPropertyCount: 256,
  /** Longest property name. */
  maxPropertyKeyLength: 200,
  /** Longest string property value. */
  maxPropertyValueLength: 32 * 1024,
  /** Longest session id in the recording path. */
  maxSessionIdLength: 128,
  /** Largest body a beacon carries; browsers refuse more than 64 KiB in flight. */
  maxBeaconBytes: 60 * 1024,
} as const;

/** A session id in a URL path: letters, digits, `-` and `_` only, so it is a plain identifier. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
