/**
 * One session's recording in rrweb-player: its timeline (click or drag to scrub), play and pause,
 * speed (1×–8×) and skip-inactivity, from the player's own controller. `seekTo` moves it from
 * outside (an event chosen beside the player); the session's errors are marks on the timeline
 * (`timeline-marks.tsx`) that jump there. The box has the recorder's block class, so a recording
 * made of the dashboard does not record the replay. The replay's frame keeps rrweb's sandbox, in
 * which no script runs, also for canvas images: the dashboard draws those itself
 * (`canvas-painter.ts`; docs/decisions.md, "Canvas recording and its replay").
 */
import { type ReactNode, useEffect, useMemo, useRef, useState } from 'react';
import type { RecordingAnswer, WireEvent } from '../api/wire-types.js';
import { formatClock, messageOf } from '../lib/format.js';
import { errorMarks } from './error-marks.js';
import { TimelineMarks, createMarksBox } from './timeline-marks.js';

/** rrweb's event types the player needs before it can show anything. */
const FULL_SNAPSHOT = 2;
const META = 4;

/** What the parent can ask of the player. */
export interface PlayerHandle {
  /** Jumps to this many ms after the recording's start, and plays. */
  seek(offsetMs: number): void;
}

type Instance = InstanceType<(typeof import('./load-player.js'))['RrwebPlayer']>;

interface ReplayPlayerProps {
  recording: RecordingAnswer;
  /** Receives the handle once the player runs, null when it is gone. */
  onReady?: (handle: PlayerHandle | null) => void;
  /** Receives the player's clock (ms from the start) as it moves, for the panels beside it. */
  onTime?: (ms: number) => void;
  /** The session's events: its `error` events are marked on the timeline. */
  events?: readonly WireEvent[];
}

/**
 * Gives rrweb-player's controls the names its markup lacks, for screen readers and keyboard users:
 * its play/pause and full-screen buttons are icons without text, its skip-inactivity switch a
 * checkbox with an empty label, and its timeline is a plain element. Returns the timeline, whose position the caller keeps current.
 */
function nameControls(root: HTMLElement, totalMs: number): HTMLElement | null {
  const buttons = [...root.querySelectorAll<HTMLButtonElement>('.rr-controller__btns > button')].filter((b) => (b.textContent ?? '').trim() === '');
  const [playPause] = buttons;
  const fullScreen = buttons.length > 1 ? buttons[buttons.length - 1] : undefined;
  playPause?.setAttribute('aria-label', 'Play or pause');
  fullScreen?.setAttribute('aria-label', 'Full screen');
  for (const speed of root.querySelectorAll<HTMLButtonElement>('.rr-controller__btns > button')) {
    const text = (speed.textContent ?? '').trim();
    if (/^\d+x$/.test(text)) speed.setAttribute('aria-label', `Speed ${text}`);
  }
  // The skip-inactivity switch is a hidden checkbox whose <label> is empty (the text is a span
  // beside it): named after that text.
  for (const toggle of root.querySelectorAll<HTMLElement>('.rr-controller .switch')) {
    const text = (toggle.querySelector('.label')?.textContent ?? '').trim();
    if (text !== '') toggle.querySelector('input[type="checkbox"]')?.setAttribute('aria-label', text.charAt(0).toUpperCase() + text.slice(1));
  }
  const timeline = root.querySelector<HTMLElement>('.rr-progress');
  if (timeline !== null) {
    timeline.setAttribute('role', 'slider');
    timeline.setAttribute('aria-label', 'Timeline');
    timeline.setAttribute('aria-valuemin', '0');
    timeline.setAttribute('aria-valuemax', String(Math.round(totalMs)));
  }
  return timeline;
}

/** The player. */
export function ReplayPlayer({ recording, onReady, onTime, events: sessionEvents }: ReplayPlayerProps): ReactNode {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [time, setTime] = useState<{ now: number; total: number } | null>(null);
  const [marksBox, setMarksBox] = useState<{ box: HTMLElement; total: number } | null>(null);
  /** Canvas images of this recording that could not be drawn (undecodable bytes). */
  const [canvasFailures, setCanvasFailures] = useState(0);
  const total = marksBox?.total;
  const marks = useMemo(() => {
    if (sessionEvents === undefined || total === undefined) return [];
    // The player's clock starts at the earliest recorded event.
    let start = Infinity;
    for (const e of recording.events) if (e.timestamp < start) start = e.timestamp;
    return errorMarks(sessionEvents, start, total);
  }, [sessionEvents, recording, total]);

  useEffect(() => {
    const events = recording.events;
    if (events.length < 2 || !events.some((e) => e.type === FULL_SNAPSHOT)) {
      setError('This recording has no full snapshot yet (too short, or its first chunk has not arrived).');
      return;
    }
    let player: Instance | null = null;
    let cancelled = false;
    let ticker: ReturnType<typeof setInterval> | undefined;
    let removeMarks: (() => void) | undefined;
    let stopPainting: (() => void) | undefined;
    setCanvasFailures(0);
    const meta = events.find((e) => e.type === META)?.data as { width?: number; height?: number } | undefined;
    import('./load-player.js')
      .then(({ RrwebPlayer, canvasFrames, createCanvasPainter }) => {
        const target = box.current;
        if (cancelled || target === null) return;
        target.replaceChildren();
        const canvas = canvasFrames(events);
        const painter = createCanvasPainter(canvas, { onError: () => setCanvasFailures((n) => n + 1) });
        stopPainting = painter.stop;
        const width = Math.max(280, target.clientWidth);
        const ratio = meta?.width && meta.height ? meta.height / meta.width : 0.625;
        player = new RrwebPlayer({
          target,
          props: {
            // The recorder's events, as the server stored them, less the canvas images the painter draws.
            events: canvas.events as unknown as ConstructorParameters<typeof RrwebPlayer>[0]['props']['events'],
            width,
            height: Math.round(Math.min(width * ratio, window.innerHeight * 0.6)),
            autoPlay: true,
            skipInactive: true,
            speedOption: [1, 2, 4, 8],
            showController: true,
            mouseTail: false,
            showWarning: false,
            blockClass: 'sa-block',
            // Not `UNSAFE_replayCanvas`: that would let the frame run script.
            plugins: [painter.plugin],
          },
        });
        const p = player;
        // After rrweb's own handler, which builds the page a jump made; and once now, for a jump
        // made while the player was being built.
        p.getReplayer().on('flush', painter.caughtUp);
        painter.caughtUp();
        const total = p.getMetaData().totalTime;
        const timeline = nameControls(target, total);
        ticker = setInterval(() => {
          const now = Math.min(total, p.getReplayer().getCurrentTime());
          setTime({ now, total });
          onTime?.(now);
          timeline?.setAttribute('aria-valuenow', String(Math.round(now)));
          timeline?.setAttribute('aria-valuetext', `${formatClock(now)} of ${formatClock(total)}`);
        }, 250);
        const seek = (offset: number) => p.goto(Math.max(0, Math.min(total, offset)), true);
        if (timeline !== null) {
          const marks = createMarksBox(timeline, seek);
          removeMarks = marks.remove;
          setMarksBox({ box: marks.box, total });
        }
        onReady?.({ seek });
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(messageOf(e));
      });
    return () => {
      cancelled = true;
      stopPainting?.();
      clearInterval(ticker);
      setMarksBox(null);
      removeMarks?.();
      onReady?.(null);
      // A Svelte component; its typings name svelte, which is not installed.
      (player as { $destroy?: () => void } | null)?.$destroy?.();
    };
  }, [recording, onReady, onTime]);

  return (
    <div className="replay-player">
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div ref={box} className="player-box sa-block" data-testid="replay-frame" />
      {marksBox !== null && <TimelineMarks marks={marks} totalMs={marksBox.total} container={marksBox.box} />}
      {time !== null && (
        <p className="muted small" data-testid="replay-time" data-ms={Math.round(time.now)} data-total-ms={Math.round(time.total)}>
          {formatClock(time.now)} / {formatClock(time.total)}
          {recording.gaps.length > 0 ? ` · ${recording.gaps.length} missing chunk${recording.gaps.length === 1 ? '' : 's'}` : ''}
          {canvasFailures > 0 ? ` · ${canvasFailures} canvas image${canvasFailures === 1 ? '' : 's'} not shown` : ''}
        </p>
      )}
    </div>
  );
}
