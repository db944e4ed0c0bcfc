/**
 * The session's errors as marks on the player's timeline (rrweb-player's `.rr-progress`), each a
 * button at its moment: a click jumps there. The marks are drawn inside the timeline's own box
 * (`container`, made by the player), so they line up with it at every width; that box stops the
 * marks' clicks from reaching the timeline, whose own click would seek to the pointer instead.
 */
import type { ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { formatClock } from '../lib/format.js';
import type { ErrorMark } from './error-marks.js';

interface TimelineMarksProps {
  marks: readonly ErrorMark[];
  /** The recording's length, ms: a mark's place is its offset over it. */
  totalMs: number;
  /** The box inside the timeline that holds the marks. */
  container: HTMLElement;
}

/** The marks, rendered into `container`. */
export function TimelineMarks({ marks, totalMs, container }: TimelineMarksProps): ReactNode {
  if (marks.length === 0 || !(totalMs > 0)) return null;
  return createPortal(
    marks.map((mark) => {
      const label = `Error at ${formatClock(mark.offset)}: ${mark.message}`;
      return (
        <button
          key={mark.id}
          type="button"
          className="timeline-mark error"
          style={{ left: `${(mark.offset / totalMs) * 100}%` }}
          data-offset={mark.offset}
          aria-label={label}
          title={label}
          data-testid="timeline-error-mark"
        />
      );
    }),
    container,
  );
}

/**
 * Makes the box of the marks inside `timeline` and routes a mark's click to `seek`; returns the box
 * and its remover. Clicks and presses on a mark stop at the box (see the module comment).
 */
export function createMarksBox(timeline: HTMLElement, seek: (offsetMs: number) => void): { box: HTMLElement; remove: () => void } {
  const box = timeline.ownerDocument.createElement('div');
  box.className = 'timeline-marks';
  const onClick = (event: Event): void => {
    const mark = (event.target as Element | null)?.closest?.('[data-offset]');
    if (mark === null || mark === undefined) return;
    event.stopPropagation();
    seek(Number((mark as HTMLElement).dataset.offset));
  };
  const stopOnMark = (event: Event): void => {
    if ((event.target as Element | null)?.closest?.('[data-offset]')) event.stopPropagation();
  };
  box.addEventListener('click', onClick);
  box.addEventListener('mousedown', stopOnMark);
  box.addEventListener('pointerdown', stopOnMark);
  timeline.append(box);
  return {
    box,
    remove: () => {
      box.removeEventListener('click', onClick);
      box.removeEventListener('mousedown', stopOnMark);
      box.removeEventListener('pointerdown', stopOnMark);
      box.remove();
    },
  };
}
