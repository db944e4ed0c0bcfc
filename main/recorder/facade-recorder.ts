/**
 * The recording operations of the `createAnalytics()` client: a {@link SessionRecorder} bound to
 * the client's delivery, storage, identity and current session. A recording belongs to one session:
 * `startRecording()` in a session other than the recorder's stops that recording (final upload) and
 * starts one for the current session, and `reset()` (a new session) does the same for a recording
 * in progress.
 */
import type { ResolvedConfig } from '../config.js';
import { SessionRecorder } from './session-recorder.js';
import type { RecordingStartOptions } from './recording-config.js';
import type { RecorderDeps } from './types.js';

/** Recorder operations of the client. */
export interface RecorderOperations {
  /**
   * Starts recording the current session (the states: {@link SessionRecorder}).
   * @param options - console, network and canvas capture for the recording this call starts,
   *   over `recording.console`, `recording.network`, `recording.recordCanvas` and
   *   `recording.canvasFps` of the configuration (without them, the configuration's). A recording in progress goes on as it is; a paused one resumes when the
   *   options are those it was started with, else it is stopped and a new one starts.
   */
  startRecording(options?: RecordingStartOptions): void;
  /** Stops recording and uploads the rest with `is_final: true`. */
  stopRecording(): void;
  /** Pauses recording; what was captured is kept for the final upload. */
  pauseRecording(): void;
  /** Resumes a paused recording. */
  resumeRecording(): void;
  /** True while recording (not while paused). */
  isRecordingActive(): boolean;
}

/** The client's recorder: the operations, plus what the client itself calls. */
export interface FacadeRecorder extends RecorderOperations {
  /** The session changed (`reset()`): a recording in progress goes on in the new session. */
  sessionChanged(): void;
  /** Shutdown: stops recording; later calls do nothing. */
  close(): void;
}

/** Creates the client's recorder; nothing is loaded until the first `startRecording()`. */
export function createFacadeRecorder(config: ResolvedConfig, sessionId: () => string, deps: RecorderDeps): FacadeRecorder {
  let recorder: SessionRecorder | undefined;
  /** The options of the current recorder: a recording that moves to a new session keeps them. */
  let options: RecordingStartOptions | undefined;
  let closed = false;
  const start = (given?: RecordingStartOptions): void => {
    if (closed) return;
    const id = sessionId();
    if (recorder?.sessionId !== id || (given !== options && !recorder.isActive())) {
      recorder?.stop();
      options = given;
      recorder = new SessionRecorder(config, id, { ...config.recording, ...given }, deps);
    }
    recorder.start();
  };
  const forward = (method: 'stop' | 'pause' | 'resume') => (): void => recorder?.[method]();
  const stop = forward('stop');
  return {
    startRecording: start,
    stopRecording: stop,
    pauseRecording: forward('pause'),
    resumeRecording: forward('resume'),
    isRecordingActive: () => recorder?.isActive() === true,
    sessionChanged: () => (recorder?.isActive() ? start(options) : stop()),
    close() {
      stop();
      closed = true;
    },
  };
}
