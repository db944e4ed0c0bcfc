/**
 * Uploads session recordings in chunks (SPEC.md "Session recorder", "Recording upload payload";
 * DESIGN.md "The recorder"). Capture runs on the main thread; this part buffers, chunks and
 * uploads, one session at a time per session id.
 *
 * Offsets: a chunk's `event_offset` is the number of events of the session put into chunks before
 * it. A chunk's offset and content are fixed when it is formed and it is resent unchanged until
 * it is accepted or given up, and chunks of one session go strictly in order, one at a time. The
 * server dedupes on (session, event_offset), so an offset must never carry different events: a
 * chunk that is dropped leaves a gap rather than having its offset reused.
 *
 * An empty chunk would occupy its offset without covering it: if the recording went on in the same
 * session (stop, then start again), its next chunk would carry the same offset and be dropped by
 * the server as a duplicate. So a periodic cut keeps the newest event back for the next chunk,
 * which makes the final chunk of `recording-stop` non-empty whenever anything was recorded since
 * the last stop; a repeated stop sends nothing. The empty final chunk SPEC.md asks for remains
 * only for a stop with nothing recorded at all.
 */
import { LIMITS } from '../protocol/limits.js';
import type { RecordedEvent } from '../protocol/recording.js';
import { type RetrySettings, nextDelay } from './retry-policy.js';
import { type SendOutcome, type TimerDeps, failureOf } from './sender.js';
import type { RecordingMeta, ToWorkerMessage } from './types.js';

/** SPEC.md: "an upload runs every 10 seconds". */
export const RECORDING_UPLOAD_INTERVAL_MS = 10_000;

/** A chunk is cut before its events pass this size (JSON characters), so a body stays near 1 MB. */
export const MAX_CHUNK_CHARS = 1_000_000;

/** The recorder's data-plane messages. */
export type RecordingMessage = Extract<
  ToWorkerMessage,
  { t: 'recording' | 'recording-stop' | 'recording-pause' | 'recording-clear' }
>;

/** What the uploader needs from its driver. */
export interface RecordingUploaderDeps extends TimerDeps {
  now: () => number;
  /** Posts one chunk body for `sessionId` (`sender.ts` `sendRecordingChunk`). */
  send: (sessionId: string, body: string) => Promise<SendOutcome>;
  retry: RetrySettings;
  log: (level: 'debug' | 'warn', message: string) => void;
  /** Called when {@link RecordingUploader.queued} may have changed. */
  onChange: () => void;
}

/** The uploader; create one with {@link createRecordingUploader}. */
export interface RecordingUploader {
  receive(message: RecordingMessage): void;
  /**
   * Page hidden or shutting down: cut chunks of what is buffered and send them now, without
   * waiting out retry backoff. `everything` (shutdown) also sends the event a cut keeps back.
   */
  uploadNow(everything?: boolean): void;
  /** Recorded events buffered or in chunks not yet accepted (status `recordingQueued`). */
  readonly queued: number;
  /** Stops every timer; requests in flight finish, nothing new starts. */
  close(): void;
}

interface Chunk {
  offset: number;
  count: number;
  body: string;
  /** Failed sends so far. */
  attempts: number;
  notBefore: number;
}

interface Session {
  id: string;
  meta: RecordingMeta;
  buffer: RecordedEvent[];
  /** Offset of the next chunk formed. */
  nextOffset: number;
  /** Formed chunks not yet accepted, in offset order; the first one is the next to send. */
  chunks: Chunk[];
  sending: boolean;
  uploadTimer: unknown;
  retryTimer: unknown;
  /** A final chunk was cut and nothing was recorded since. */
  finished: boolean;
}

/** Creates an uploader with no sessions. */
export function createRecordingUploader(deps: RecordingUploaderDeps): RecordingUploader {
  const sessions = new Map<string, Session>();
  let closed = false;

  function sessionFor(id: string, meta: RecordingMeta): Session {
    let session = sessions.get(id);
    if (session === undefined) {
      session = {
        id,
        meta,
        buffer: [],
        nextOffset: 0,
        chunks: [],
        sending: false,
        uploadTimer: undefined,
        retryTimer: undefined,
        finished: false,
      };
      sessions.set(id, session);
    } else {
      session.meta = meta;
    }
    return session;
  }

  function stopUploadTimer(session: Session): void {
    if (session.uploadTimer !== undefined) deps.clearTimeout(session.uploadTimer);
    session.uploadTimer = undefined;
  }

  function armUploadTimer(session: Session): void {
    if (session.uploadTimer !== undefined || closed) return;
    session.uploadTimer = deps.setTimeout(() => {
      session.uploadTimer = undefined;
      cutChunks(session, 'keep-newest');
      pump(session);
      // The next tick is armed by the next 'recording' message: an idle session keeps no timer.
    }, RECORDING_UPLOAD_INTERVAL_MS);
  }

  /**
   * Moves the buffer into chunks of at most ~1 MB. `'final'` marks the last one (made even if
   * empty); `'keep-newest'` leaves the newest event in the buffer (see the file comment).
   */
  function cutChunks(session: Session, mode: 'final' | 'keep-newest' | 'all'): void {
    const keep = mode === 'keep-newest' ? 1 : 0;
    if (session.buffer.length <= keep && mode !== 'final') return;
    const buffer = keep === 0 ? session.buffer : session.buffer.slice(0, -keep);
    session.buffer = keep === 0 ? [] : session.buffer.slice(-keep);
    const final = mode === 'final';
    let parts: string[] = [];
    let chars = 0;
    for (const event of buffer) {
      const json = encode(event);
      if (json === undefined) {
        deps.log('warn', `a recorded event of session ${session.id} cannot be serialised; it is left out`);
        continue;
      }
      if (parts.length > 0 && (chars + json.length > MAX_CHUNK_CHARS || parts.length >= LIMITS.maxRecordedEventsPerChunk)) {
        addChunk(session, parts, false);
        parts = [];
        chars = 0;
      }
      parts.push(json);
      chars += json.length + 1;
    }
    if (parts.length > 0 || final) addChunk(session, parts, final);
  }

  function addChunk(session: Session, parts: string[], final: boolean): void {
    const { meta } = session;
    const offset = session.nextOffset;
    const elapsed = (deps.now() - meta.startedAt) / 1000;
    // Every value below must be JSON: NaN or undefined would break the hand-built body.
    const duration = Number.isFinite(elapsed) ? Math.max(0, elapsed) : 0;
    // Built by hand around the pre-serialised events, so each event is stringified once.
    const body =
      `{"events":[${parts.join(',')}],"duration":${duration},"start_url":${JSON.stringify(meta.startUrl ?? null)},` +
      `"user_id":${JSON.stringify(meta.userId || null)},"is_final":${final},"event_offset":${offset}}`;
    session.chunks.push({ offset, count: parts.length, body, attempts: 0, notBefore: 0 });
    session.nextOffset += parts.length;
  }

  function pump(session: Session): void {
    if (closed || session.sending) return;
    const chunk = session.chunks[0];
    if (chunk === undefined) return;
    const wait = chunk.notBefore - deps.now();
    if (wait > 0) {
      if (session.retryTimer === undefined) {
        session.retryTimer = deps.setTimeout(() => {
          session.retryTimer = undefined;
          pump(session);
        }, wait);
      }
      return;
    }
    session.sending = true;
    void deps.send(session.id, chunk.body).then(
      (outcome) => settle(session, chunk, outcome),
      (error: unknown) => settle(session, chunk, { kind: 'network', timedOut: false, message: String(error) }),
    );
  }

  function settle(session: Session, chunk: Chunk, outcome: SendOutcome): void {
    session.sending = false;
    if (outcome.kind === 'ok') {
      dropChunk(session, chunk);
    } else {
      chunk.attempts += 1;
      const wait = nextDelay(chunk.attempts, failureOf(outcome), deps.retry);
      if (wait === 'give-up') {
        deps.log('warn', `recording chunk at offset ${chunk.offset} of session ${session.id} dropped: ${outcome.message}`);
        dropChunk(session, chunk);
      } else {
        deps.log('debug', `recording chunk at offset ${chunk.offset} of session ${session.id} retried in ${wait} ms: ${outcome.message}`);
        chunk.notBefore = deps.now() + wait;
      }
    }
    pump(session);
  }

  function dropChunk(session: Session, chunk: Chunk): void {
    const index = session.chunks.indexOf(chunk);
    if (index >= 0) session.chunks.splice(index, 1);
    deps.onChange();
  }

  return {
    receive(message) {
      if (closed) return;
      if (message.t === 'recording') {
        const session = sessionFor(message.sessionId, message.meta);
        for (const event of message.events) session.buffer.push(event);
        if (message.events.length > 0) session.finished = false;
        armUploadTimer(session);
        deps.onChange();
        return;
      }
      const session = sessions.get(message.sessionId);
      if (session === undefined) {
        // Nothing was ever recorded for it, so there is no start_url or start time to report.
        deps.log('debug', `${message.t} for session ${message.sessionId}, which has recorded nothing`);
        return;
      }
      switch (message.t) {
        case 'recording-stop':
          stopUploadTimer(session);
          if (session.finished) break;
          cutChunks(session, 'final');
          session.finished = true;
          pump(session);
          break;
        case 'recording-pause':
          stopUploadTimer(session);
          break;
        case 'recording-clear':
          session.buffer = [];
          // A chunk not yet on the wire is still "queued": drop it too. Its offset stays used.
          session.chunks = session.sending ? session.chunks.slice(0, 1) : [];
          break;
      }
      deps.onChange();
    },

    uploadNow(everything = false) {
      for (const session of sessions.values()) {
        cutChunks(session, everything ? 'all' : 'keep-newest');
        for (const chunk of session.chunks) chunk.notBefore = 0;
        if (session.retryTimer !== undefined) deps.clearTimeout(session.retryTimer);
        session.retryTimer = undefined;
        pump(session);
      }
    },

    get queued() {
      let count = 0;
      for (const session of sessions.values()) {
        count += session.buffer.length;
        for (const chunk of session.chunks) count += chunk.count;
      }
      return count;
    },

    close() {
      closed = true;
      for (const session of sessions.values()) {
        stopUploadTimer(session);
        if (session.retryTimer !== undefined) deps.clearTimeout(session.retryTimer);
        session.retryTimer = undefined;
      }
    },
  };
}

function encode(event: RecordedEvent): string | undefined {
  try {
    return JSON.stringify(event);
  } catch {
    return undefined;
  }
}
