/**
 * The heatmap's backdrop from a recording: rrweb-player (loaded lazily, as on the replay page)
 * paused at the moment that shows the page (`snapshot-choice.ts`), at the recorded viewport's
 * width, its frame then grown to the document's whole height so that the page is drawn top to
 * bottom, without the player's controls, cursor or scaling (the map scales the whole stage). The
 * rendered document is handed to the map, which finds the clicked elements in it; a change of its
 * layout (a late stylesheet or image) is handed on again.
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';
import type { RecordedEvent } from '../api/wire-types.js';
import { messageOf } from '../lib/format.js';
import type { SnapshotMoment } from './snapshot-choice.js';

type Instance = InstanceType<(typeof import('../replay/load-player.js'))['RrwebPlayer']>;

/** The rendered page: its document and size, px. */
export interface RenderedPage {
  doc: Document;
  width: number;
  height: number;
}

interface SnapshotBackdropProps {
  events: readonly RecordedEvent[];
  moment: SnapshotMoment;
  /** Told of the page once drawn, and again when its layout changes. */
  onPage: (page: RenderedPage) => void;
}

/** The document's height as laid out, px. */
function heightOf(doc: Document): number {
  return Math.max(doc.documentElement?.scrollHeight ?? 0, doc.body?.scrollHeight ?? 0);
}

/** The backdrop. */
export function SnapshotBackdrop({ events, moment, onPage }: SnapshotBackdropProps): ReactNode {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const report = useRef(onPage);
  report.current = onPage;

  useEffect(() => {
    let player: Instance | null = null;
    let cancelled = false;
    let observer: ResizeObserver | undefined;
    let frame = 0;
    let stopPainting: (() => void) | undefined;
    import('../replay/load-player.js')
      .then(({ RrwebPlayer, canvasFrames, createCanvasPainter }) => {
        const target = box.current;
        if (cancelled || target === null) return;
        target.replaceChildren();
        // Canvas images drawn by the dashboard, as in the replay (frame without scripts).
        const canvas = canvasFrames(events);
        const painter = createCanvasPainter(canvas);
        stopPainting = painter.stop;
        player = new RrwebPlayer({
          target,
          props: {
            events: canvas.events as unknown as ConstructorParameters<typeof RrwebPlayer>[0]['props']['events'],
            width: moment.width,
            height: moment.height,
            maxScale: 1,
            autoPlay: false,
            showController: false,
            mouseTail: false,
            showWarning: false,
            blockClass: 'sa-block',
            plugins: [painter.plugin],
          },
        });
        player.getReplayer().on('flush', painter.caughtUp);
        player.goto(moment.offsetMs, false);
        painter.caughtUp();
        const iframe = player.getReplayer().iframe;
        const fit = (): void => {
          const doc = iframe.contentDocument;
          if (cancelled || doc === null || doc.documentElement === null) return;
          const height = Math.max(moment.height, heightOf(doc));
          if (iframe.getAttribute('height') !== String(height)) iframe.setAttribute('height', String(height));
          report.current({ doc, width: moment.width, height });
        };
        // The rebuilt document lays out in the next frames; then whenever its size changes.
        frame = requestAnimationFrame(() => {
          frame = requestAnimationFrame(() => {
            fit();
            const doc = iframe.contentDocument;
            const Observer = (doc?.defaultView as (Window & typeof globalThis) | null)?.ResizeObserver;
            if (doc?.documentElement && Observer !== undefined) {
              observer = new Observer(() => fit());
              observer.observe(doc.documentElement);
            }
          });
        });
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(`The recording could not be drawn: ${messageOf(e)}`);
      });
    return () => {
      cancelled = true;
      stopPainting?.();
      cancelAnimationFrame(frame);
      observer?.disconnect();
      (player as { $destroy?: () => void } | null)?.$destroy?.();
    };
  }, [events, moment]);

  if (error !== null) return <p className="error" role="alert">{error}</p>;
  // The recorder's block class: a recording made of the dashboard does not record this page.
  return <div ref={box} className="heatmap-snapshot sa-block" aria-hidden="true" />;
}
