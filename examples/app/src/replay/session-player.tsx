/**
 * Plays one recorded session with rrweb's `Replayer` inside a scaled box, with play, pause and
 * restart. The box has the recorder's block class, so a recording made while replaying does not
 * record the replay.
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';
import type { Replayer } from 'rrweb';
import { formatDuration, messageOf } from '../format.js';
import type { ReadApi, RecordedEvent } from '../read-api.js';

/** rrweb's Meta event carries the recorded viewport. */
const META = 4;
const FULL_SNAPSHOT = 2;

type State = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; gaps: number; total: number };

/** The player for `sessionId`. */
export function SessionPlayer({ api, sessionId }: { api: ReadApi; sessionId: string }): ReactNode {
  const frame = useRef<HTMLDivElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const replayer = useRef<Replayer | null>(null);
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [playing, setPlaying] = useState(false);
  const [time, setTime] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    let player: Replayer | undefined;
    let size = { width: 1024, height: 768 };
    const fit = (): void => {
      if (frame.current === null || stage.current === null) return;
      const scale = Math.min(1, frame.current.clientWidth / size.width);
      stage.current.style.transform = `scale(${scale})`;
      frame.current.style.height = `${Math.ceil(size.height * scale)}px`;
    };
    const onResize = (): void => fit();
    setState({ kind: 'loading' });
    setPlaying(false);
    setTime(0);
    Promise.all([api.getRecording(sessionId, controller.signal), import('./load-replayer.js')])
      .then(([recording, { Replayer: ReplayerClass }]) => {
        if (controller.signal.aborted || stage.current === null) return;
        const events = recording.events;
        if (!events.some((e) => e.type === FULL_SNAPSHOT) || events.length < 2) {
          setState({ kind: 'error', message: 'This recording has no full snapshot yet (too short, or its first chunk has not arrived).' });
          return;
        }
        const meta = events.find((e: RecordedEvent) => e.type === META)?.data as { width?: number; height?: number } | undefined;
        if (meta?.width && meta.height) size = { width: meta.width, height: meta.height };
        stage.current.replaceChildren();
        player = new ReplayerClass(events as unknown as ConstructorParameters<typeof ReplayerClass>[0], {
          root: stage.current,
          skipInactive: true,
          showWarning: false,
          mouseTail: false,
          blockClass: 'sa-block',
        });
        player.on('resize', (dimension) => {
          const d = dimension as { width: number; height: number };
          size = { width: d.width, height: d.height };
          fit();
        });
        player.on('finish', () => setPlaying(false));
        replayer.current = player;
        fit();
        setState({ kind: 'ready', gaps: recording.gaps.length, total: player.getMetaData().totalTime });
        player.play();
        setPlaying(true);
      })
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setState({ kind: 'error', message: messageOf(error) });
      });
    window.addEventListener('resize', onResize);
    const ticker = setInterval(() => {
      if (replayer.current !== null) setTime(replayer.current.getCurrentTime());
    }, 250);
    return () => {
      controller.abort();
      clearInterval(ticker);
      window.removeEventListener('resize', onResize);
      player?.destroy();
      replayer.current = null;
    };
  }, [api, sessionId]);

  const play = (): void => {
    const player = replayer.current;
    if (player === null) return;
    const total = player.getMetaData().totalTime;
    player.play(player.getCurrentTime() >= total ? 0 : player.getCurrentTime());
    setPlaying(true);
  };
  const pause = (): void => {
    replayer.current?.pause();
    setPlaying(false);
  };
  const restart = (): void => {
    replayer.current?.play(0);
    setPlaying(true);
  };

  return (
    <section className="player" aria-label={`Replay of session ${sessionId}`}>
      <div className="actions">
        <button type="button" onClick={playing ? pause : play} disabled={state.kind !== 'ready'}>
          {playing ? 'Pause' : 'Play'}
        </button>
        <button type="button" onClick={restart} disabled={state.kind !== 'ready'}>
          Restart
        </button>
        {state.kind === 'ready' && (
          <span className="muted" data-testid="replay-time">
            {formatDuration(Math.min(time, state.total))} / {formatDuration(state.total)}
            {state.gaps > 0 ? ` · ${state.gaps} missing chunk${state.gaps === 1 ? '' : 's'}` : ''}
          </span>
        )}
      </div>
      {state.kind === 'loading' && <p className="muted">Loading the recording…</p>}
      {state.kind === 'error' && (
        <p className="error" role="alert">
          {state.message}
        </p>
      )}
      <div ref={frame} className="player-frame sa-block" data-testid="replay-frame">
        <div ref={stage} className="player-stage" />
      </div>
    </section>
  );
}
