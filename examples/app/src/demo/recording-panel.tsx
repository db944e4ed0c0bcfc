/**
 * Session recording: `startRecording()`, `pauseRecording()`, `resumeRecording()`, `stopRecording()`
 * and `isRecordingActive()`. rrweb is loaded only when a recording starts; inputs are masked.
 */
import { type ReactNode, useEffect, useState } from 'react';
import { useAnalytics } from 'service-analytics/react';
import { Link } from '../router.js';

type Phase = 'inactive' | 'recording' | 'paused';

/** The recording toggle. */
export function RecordingDemo(): ReactNode {
  const analytics = useAnalytics();
  const [phase, setPhase] = useState<Phase>(() => (analytics.isRecordingActive() ? 'recording' : 'inactive'));
  const [active, setActive] = useState(() => analytics.isRecordingActive());
  const [stopped, setStopped] = useState(false);

  // isRecordingActive() is the client's word; it may change on its own (maxDuration, a failed load).
  useEffect(() => {
    const timer = setInterval(() => setActive(analytics.isRecordingActive()), 500);
    return () => clearInterval(timer);
  }, [analytics]);

  const run = (next: Phase, call: () => void) => () => {
    call();
    setPhase(next);
    setActive(analytics.isRecordingActive());
    if (next === 'inactive') setStopped(true);
  };
  return (
    <section className="card" aria-labelledby="recording-heading">
      <h2 id="recording-heading">Session recording</h2>
      <p className="hint">
        Records the page with rrweb; chunks are uploaded every 10 s, the rest with <code>is_final</code> on stop. Input values are masked, and
        elements with class <code>sa-block</code> are not recorded.
      </p>
      <p>
        <span className={`badge ${active ? 'badge-recording' : 'badge-idle'}`} data-testid="recording-state">
          {active ? 'recording' : phase === 'paused' ? 'paused' : 'not recording'}
        </span>{' '}
        <code>isRecordingActive()</code> = <span data-testid="recording-active">{String(active)}</span>
      </p>
      <div className="actions">
        <button type="button" disabled={phase !== 'inactive'} onClick={run('recording', () => analytics.startRecording())}>
          Start recording
        </button>
        <button type="button" disabled={phase !== 'recording'} onClick={run('paused', () => analytics.pauseRecording())}>
          Pause
        </button>
        <button type="button" disabled={phase !== 'paused'} onClick={run('recording', () => analytics.resumeRecording())}>
          Resume
        </button>
        <button type="button" disabled={phase === 'inactive'} onClick={run('inactive', () => analytics.stopRecording())}>
          Stop recording
        </button>
      </div>
      <p className="status" role="status">
        {stopped && phase === 'inactive' && (
          <>
            Stopped and uploaded. <Link to="/replay">Replay it</Link>.
          </>
        )}
      </p>
    </section>
  );
}
