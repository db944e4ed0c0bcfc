/**
 * Session-recording operations until the recorder lands (the next issue: rrweb capture on the main
 * thread, chunked uploads in the worker). Until then they do nothing, report inactive, and say so
 * once in the debug log, so code written against the full API already runs.
 */
import type { Logger } from './logger.js';

/** Recorder operations of the client (SPEC.md "Client library operations"). */
export interface RecorderOperations {
  /** Starts recording the session (SPEC.md "Session recorder"). */
  startRecording(): void;
  /** Stops recording and uploads the rest with `is_final: true`. */
  stopRecording(): void;
  /** Pauses recording; buffered events are kept. */
  pauseRecording(): void;
  /** Resumes a paused recording. */
  resumeRecording(): void;
  /** True while recording. */
  isRecordingActive(): boolean;
}

/** Operations that record nothing yet. */
export function createRecorderPlaceholder(logger: Logger): RecorderOperations {
  let told = false;
  const unavailable = (): void => {
    if (told) return;
    told = true;
    logger.debug('session recording is not available in this version of the library yet; the call did nothing');
  };
  return {
    startRecording: unavailable,
    stopRecording: unavailable,
    pauseRecording: unavailable,
    resumeRecording: unavailable,
    isRecordingActive: () => false,
  };
}
