import { Worker } from 'node:worker_threads';
import { RECORDING_LIMITS, type RecordingLimits, recordedDataProblem, recordingUploadProblem } from '../protocol/index.js';
import type { StoredRecordingChunk } from './store/event-store.js';

/*
 * Recording chunks are parsed, checked and re-serialized on a thread of their own. A chunk may be
 * 16 MiB of JSON, and parsing, walking and serializing that on the request thread stopped every
 * other request for seconds (a chunk of `[{},{},…]`, for one), health checks and event batches
 * included (docs/decisions.md, "Recording endpoint: authentication and answer"). On this thread a
 * chunk costs the request thread only the copies of its text in and out. Chunks are handled one at
 * a time, so at most one parsed chunk is in memory, and the thread runs under a heap limit: a chunk
 * too complex to parse ends the thread, not the server.
 */

/** A recording chunk checked and ready to store, but for where and when it arrived. */
export type ParsedChunk = Omit<StoredRecordingChunk, 'projectId' | 'sessionId' | 'receivedAt'>;

/** What the parser made of a body: a chunk, or the error to answer with. */
export type ParseOutcome =
  | { ok: true; chunk: ParsedChunk }
  | { ok: false; code: 'INVALID_JSON' | 'VALIDATION_ERROR' | 'PAYLOAD_TOO_LARGE'; error: string };

/** How to place the chunk's events in time: the skew correction and the accepted window. */
export interface ChunkTime {
  /** Added to every recorded timestamp (clock-skew correction), ms. */
  offsetMs: number;
  /** Earliest and latest accepted corrected timestamp, ms since the epoch. */
  earliest: number;
  latest: number;
}

/** The parser thread, seen from the request thread. */
export interface RecordingParser {
  /** Parses and checks one chunk body on the parser thread. */
  parse(text: string, time: ChunkTime): Promise<ParseOutcome>;
  /** Ends the thread; chunks still waiting fail. */
  close(): Promise<void>;
}

/** Options of {@link createRecordingParser}. */
export interface RecordingParserOptions {
  /**
   * Heap of the parser thread, MiB. A chunk whose parsed form does not fit is refused with 413
   * (a 16 MiB body of valid rrweb events needs far less than the default).
   * @default 1024
   */
  heapMb?: number;
}

interface Request {
  id: number;
  text: string;
  time: ChunkTime;
}

interface ParserPort {
  on(event: 'message', listener: (message: Request) => void): void;
  postMessage(message: { id: number; outcome: ParseOutcome }): void;
}

type UploadProblem = typeof recordingUploadProblem;
type DataProblem = typeof recordedDataProblem;

/**
 * The thread's program, sent as source text like the SQLite writer's (`store/sqlite/sqlite-writer.ts`), so
 * it runs the same from the sources under test, from a bundle and from `dist/`. Self-contained.
 */
function parserThreadMain(port: ParserPort, limits: RecordingLimits, uploadProblem: UploadProblem, dataProblem: DataProblem): void {
  const handle = (text: string, time: ChunkTime): ParseOutcome => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { ok: false, code: 'INVALID_JSON', error: 'The body is not valid JSON.' };
    }
    const events0 = (body as { events?: unknown } | null)?.events;
    if (Array.isArray(events0) && events0.length > limits.maxEvents) {
      // Too many, like a batch over its event count: a size limit, not a malformed chunk.
      return { ok: false, code: 'PAYLOAD_TOO_LARGE', error: `A recording chunk holds at most ${limits.maxEvents} events; this one has ${events0.length}.` };
    }
    const problem = uploadProblem(body, limits, dataProblem);
    if (problem !== null) return { ok: false, code: 'VALIDATION_ERROR', error: problem };
    const u = body as { events: Array<{ timestamp: number }>; duration: number; start_url?: string | null; user_id?: string | null; is_final?: boolean; event_offset: number };
    const events = u.events;
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as { timestamp: number };
      const at = event.timestamp + time.offsetMs;
      if (!(at >= time.earliest && at <= time.latest)) {
        return {
          ok: false,
          code: 'VALIDATION_ERROR',
          error: `events.${i}.timestamp: ${event.timestamp} is outside the accepted time range (${new Date(time.earliest).toISOString()} to 1 day after arrival, after clock-skew correction).`,
        };
      }
      event.timestamp = at;
    }
    return {
      ok: true,
      chunk: {
        eventsJson: JSON.stringify(events),
        eventCount: events.length,
        duration: u.duration,
        startUrl: u.start_url ?? null,
        userId: u.user_id ?? null,
        isFinal: u.is_final ?? false,
        eventOffset: u.event_offset,
      },
    };
  };
  port.on('message', (request) => port.postMessage({ id: request.id, outcome: handle(request.text, request.time) }));
}

const SOURCE = `'use strict';
const { workerData, parentPort } = require('node:worker_threads');
(${parserThreadMain.toString()})(parentPort, workerData, ${recordingUploadProblem.toString()}, ${recordedDataProblem.toString()});`;

interface Waiting {
  request: Request;
  resolve(outcome: ParseOutcome): void;
  reject(error: Error): void;
}

const TOO_COMPLEX: ParseOutcome = {
  ok: false,
  code: 'PAYLOAD_TOO_LARGE',
  error: 'The recording chunk holds more values than the server parses at once; send smaller chunks.',
};

/**
 * Creates the parser. The thread starts with the first chunk and does not keep the process alive.
 * A thread that dies (its heap limit) refuses the chunk it was parsing with 413; the chunks queued
 * behind that one go to a new thread.
 */
export function createRecordingParser(options: RecordingParserOptions = {}): RecordingParser {
  const heapMb = options.heapMb ?? 1024;
  let thread: Worker | null = null;
  let closed = false;
  let nextId = 1;
  // In the order sent, which is the order the thread works in: the first is the one in hand.
  const waiting = new Map<number, Waiting>();

  function start(): Worker {
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: RECORDING_LIMITS,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    worker.unref();
    worker.on('message', (message: { id: number; outcome: ParseOutcome }) => {
      const entry = waiting.get(message.id);
      waiting.delete(message.id);
      entry?.resolve(message.outcome);
    });
    let failed = false;
    const fail = (error: Error): void => {
      if (failed) return;
      failed = true;
      if (thread === worker) thread = null;
      const entries = [...waiting.values()];
      waiting.clear();
      const [inHand, ...queued] = entries;
      if (inHand === undefined) return;
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') inHand.resolve(TOO_COMPLEX);
      else inHand.reject(error);
      for (const entry of queued) {
        if (closed) entry.reject(error);
        else send(entry);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The recording parser thread exited (code ${code}).`)));
    return worker;
  }

  function send(entry: Waiting): void {
    thread ??= start();
    waiting.set(entry.request.id, entry);
    thread.postMessage(entry.request);
  }

  return {
    parse(text, time) {
      if (closed) return Promise.reject(new Error('The recording parser is closed.'));
      return new Promise<ParseOutcome>((resolve, reject) => send({ request: { id: nextId++, text, time }, resolve, reject }));
    },
    async close() {
      closed = true;
      const worker = thread;
      thread = null;
      if (worker) await worker.terminate();
    },
  };
}
