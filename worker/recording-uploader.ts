/**
 * Uploads session recordings in chunks (docs/architecture.md, "Recordings"; the chunk's form:
 * docs/protocol.md, "Recording chunk"). Capture runs on the main thread; this part buffers, chunks
 * and uploads, one session at a time per session id.
 *
 * Offsets: a chunk's `event_offset` is the index of its first event in the session's recording. A
 * chunk's offset and content are fixed when it is formed and it is resent unchanged until it is
 * accepted or given up; chunks of one session go strictly in order, one at a time. The server
 * dedupes on (session, event_offset), so an offset never carries different events: a chunk that is
 * dropped, or an event that cannot be serialised, leaves a gap rather than having its index reused.
 *
 * The recorder numbers a session's events itself and sends the index of each message's first
 * event as `meta.offset`, persisted in the page's storage, since the worker's memory does not
 * outlive a reload or a worker restart (a recording continued in the same session would otherwise
 * restart at 0 and the server would drop its chunks). A new session starts at its first message's
 * index; a message that skips ahead (another page of the session took the indexes between, or
 * events were discarded) first closes the buffer into chunks; one behind the buffer's end goes on
 * at the end. Without `meta.offset` the uploader counts from 0 itself.
 *
 * An empty chunk would occupy its offset without covering it, so the next chunk of a recording
 * continued in the same session would be dropped as a duplicate. A numbering recorder ends every
 * recording with an event of its own (a stop marker), so its final chunk is never empty and every
 * cut sends everything. Without `meta.offset`, periodic and page-hidden cuts keep the newest event
 * back, so the final chunk of `recording-stop` is non-empty whenever anything was recorded since
 * the last stop (a repeated stop sends nothing); an empty final chunk is left only for a stop with
 * nothing recorded at all.
 */
import { LIMITS } from '../protocol/limits.js';
import type { RecordedEvent } from '../protocol/wire-types.js';
import { type RetrySettings, judge, nextDeferral, nextDelay } from './retry-policy.js';
import type { SendOutcome } from './sender.js';
import type { Timers } from '../protocol/worker/timers.js';
import type { RecordingMeta, ToWorkerMessage } from '../protocol/worker/worker-contract.js';

/** An upload runs every 10 seconds (docs/decisions.md, "Recording upload and the recorder's states"). */
export const RECORDING_UPLOAD_INTERVAL_MS = 10_000;

/** A chunk is cut before its events pass this size (JSON characters), so a body stays near 1 MB. */
export const MAX_CHUNK_CHARS = 1_000_000;

/** The recorder's data-plane messages. */
export type RecordingMessage = Extract<
  ToWorkerMessage,
  { t: 'recording' | 'recording-stop' | 'recording-pause' | 'recording-clear' }
>;

/** What the uploader needs from its driver. */
export interface RecordingUploaderDeps extends Timers {
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
   * waiting out retry backoff. `everything` (shutdown) also sends the event a cut of a session
   * without `meta.offset` keeps back.
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
  /** Failed sends so far, deferrals not counted. */
  attempts: number;
  /** Deferrals (429, 503 with Retry-After) in a row. */
  deferrals: number;
  /** When the chunk was cut, ms: deferrals give up once it is a day old. */
  createdAt: number;
  notBefore: number;
}

interface Session {
  id: string;
  meta: RecordingMeta;
  buffer: RecordedEvent[];
  /** Offset of the next chunk formed: the index of `buffer[0]` in the session's recording. */
  nextOffset: number;
  /** The recorder numbers the events (`meta.offset`): no event is kept back at a cut. */
  numbered: boolean;
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
        nextOffset: offsetOf(meta) ?? 0,
        numbered: offsetOf(meta) !== undefined,
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
   * empty); `'keep-newest'` leaves the newest event of an unnumbered session in the buffer (see the
   * file comment).
   */
  function cutChunks(session: Session, mode: 'final' | 'keep-newest' | 'all'): void {
    const keep = mode === 'keep-newest' && !session.numbered ? 1 : 0;
    if (session.buffer.length <= keep && mode !== 'final') return;
    const buffer = keep === 0 ? session.buffer : session.buffer.slice(0, -keep);
    session.buffer = keep === 0 ? [] : session.buffer.slice(-keep);
    let parts: string[] = [];
    let chars = 0;
    const close = (final: boolean): void => {
      addChunk(session, parts, final);
      parts = [];
      chars = 0;
    };
    for (const event of buffer) {
      const json = encode(event);
      if (json === undefined) {
        deps.log('warn', `a recorded event of session ${session.id} cannot be serialised; it is left out`);
        // Its index stays unused, so the events after it keep theirs.
        if (parts.length > 0) close(false);
        session.nextOffset += 1;
        continue;
      }
      if (parts.length > 0 && (chars + json.length > MAX_CHUNK_CHARS || parts.length >= LIMITS.maxRecordedEventsPerChunk)) close(false);
      parts.push(json);
      chars += json.length + 1;
    }
    if (parts.length > 0 || mode === 'final') close(mode === 'final');
  }

  /** A numbered message whose first index does not follow on from the buffer: close the buffer, continue there. */
  function continueAt(session: Session, offset: number): void {
    const end = session.nextOffset + session.buffer.length;
    if (offset === end) return;
    if (offset < end) {
      deps.log('debug', `recording of session ${session.id}: index ${offset} is already used; continuing at ${end}`);
      return;
    }
    cutChunks(session, 'all');
    session.nextOffset = offset;
    pump(session);
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
    session.chunks.push({ offset, count: parts.length, body, attempts: 0, deferrals: 0, createdAt: deps.now(), notBefore: 0 });
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
      (error: unknown) => settle(session, chunk, { kind: 'failed', message: `sending a recording chunk failed: ${String(error)}` }),
    );
  }

  function settle(session: Session, chunk: Chunk, outcome: SendOutcome): void {
    session.sending = false;
    if (outcome.kind === 'ok') {
      dropChunk(session, chunk);
    } else {
      // The same verdict as for event batches (`retry-policy.ts`): a deferral spends no attempt.
      const verdict = judge(outcome);
      const now = deps.now();
      let wait: number | 'give-up' = 'give-up';
      if (verdict.action === 'retry') {
        chunk.attempts += 1;
        chunk.deferrals = 0;
        wait = nextDelay(chunk.attempts, verdict.failure, deps.retry);
      } else if (verdict.action === 'defer') {
        chunk.deferrals += 1;
        wait = nextDeferral(chunk.deferrals, chunk.createdAt, now, verdict.failure, deps.retry);
      }
      if (wait === 'give-up') {
        deps.log('warn', `recording chunk at offset ${chunk.offset} of session ${session.id} dropped: ${outcome.message}`);
        dropChunk(session, chunk);
      } else {
        deps.log('debug', `recording chunk at offset ${chunk.offset} of session ${session.id} retried in ${wait} ms: ${outcome.message}`);
        chunk.notBefore = now + wait;
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
        const offset = offsetOf(message.meta);
        if (offset !== undefined) {
          session.numbered = true;
          if (message.events.length > 0) continueAt(session, offset);
        }
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

/** `meta.offset` when it is a usable index. */
function offsetOf(meta: RecordingMeta): number | undefined {
  const { offset } = meta;
  return typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined;
}

function encode(event: RecordedEvent): string | undefined {
  try {
    return JSON.stringify(event);
  } catch {
    return undefined;
  }
}
