/**
 * A list of timed entries beside the player, kept in step with its clock: entries at or before the
 * player's time are shown as past, the latest of them as current (`aria-current`), and the list
 * scrolls itself (not the page) to keep the current one in view. Choosing an entry seeks the player
 * to its moment.
 */
import { type ReactNode, useEffect, useRef } from 'react';
import { formatClock } from '../lib/format.js';
import { type TimedEntry, currentIndex } from './replay-entries.js';

interface TimedListProps<T> {
  entries: ReadonlyArray<TimedEntry<T>>;
  /** The player's clock (ms from the start); null before it runs. */
  now: number | null;
  /** Seeks the player to an entry's offset. */
  onSeek: (offset: number) => void;
  /** What a row shows after its time. */
  row: (entry: T) => ReactNode;
  /** What an entry's row is marked with (e.g. its level, failed). */
  rowClass?: (entry: T) => string;
  /** Shown below an entry's row (a stack, headers), outside its button. */
  detail?: (entry: T) => ReactNode;
  label: string;
  testId: string;
}

/** The list. */
export function TimedList<T>({ entries, now, onSeek, row, rowClass, detail, label, testId }: TimedListProps<T>): ReactNode {
  const box = useRef<HTMLOListElement>(null);
  const current = now === null ? -1 : currentIndex(entries, now);

  useEffect(() => {
    const list = box.current;
    const item = current < 0 ? null : (list?.children[current] as HTMLElement | undefined);
    if (list === null || item === undefined || item === null) return;
    const top = item.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + item.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 3);
    }
  }, [current]);

  return (
    <ol className="timed-list" ref={box} aria-label={label} data-testid={testId} data-current={current}>
      {entries.map(({ offset, entry }, i) => (
        <li key={i} className={`timed-row ${i <= current ? 'past' : 'future'} ${rowClass?.(entry) ?? ''}`} aria-current={i === current ? 'true' : undefined}>
          <button type="button" className="timed-pick" onClick={() => onSeek(offset)} data-offset={Math.round(offset)}>
            <span className="timed-at">{formatClock(offset)}</span>
            {row(entry)}
          </button>
          {detail?.(entry)}
        </li>
      ))}
    </ol>
  );
}
