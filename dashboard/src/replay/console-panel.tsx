/** The recording's console beside the player: level filter, time-synced, a click seeks. */
import { type ReactNode, useMemo, useState } from 'react';
import type { ConsoleEntry, ConsoleLevel } from '../../../protocol/replay-entries.js';
import type { TimedEntry } from './replay-entries.js';
import { TimedList } from './timed-list.js';

/** The filter's choices: a level shows that level; `warn` shows warnings and errors. */
type LevelFilter = 'all' | 'error' | 'warn' | 'info' | 'log' | 'debug';
const FILTERS: ReadonlyArray<{ value: LevelFilter; label: string }> = [
  { value: 'all', label: 'All levels' },
  { value: 'error', label: 'Errors' },
  { value: 'warn', label: 'Warnings and errors' },
  { value: 'info', label: 'Info' },
  { value: 'log', label: 'Log' },
  { value: 'debug', label: 'Debug' },
];

/** Whether `level` passes `filter`. */
export function levelMatches(level: ConsoleLevel, filter: LevelFilter): boolean {
  if (filter === 'all') return true;
  const severe = level === 'error' || level === 'assert';
  if (filter === 'error') return severe;
  if (filter === 'warn') return severe || level === 'warn';
  return level === filter;
}

interface ConsolePanelProps {
  entries: ReadonlyArray<TimedEntry<ConsoleEntry>>;
  now: number | null;
  onSeek: (offset: number) => void;
}

/** The panel's body (the page gives it its card). */
export function ConsolePanel({ entries, now, onSeek }: ConsolePanelProps): ReactNode {
  const [filter, setFilter] = useState<LevelFilter>('all');
  const shown = useMemo(() => entries.filter((e) => levelMatches(e.entry.level, filter)), [entries, filter]);
  return (
    <div className="entry-panel">
      <div className="entry-filters">
        <label>
          Level{' '}
          <select value={filter} onChange={(e) => setFilter(e.target.value as LevelFilter)} data-testid="console-level">
            {FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <span className="muted small">
          {shown.length} of {entries.length}
        </span>
      </div>
      {entries.length === 0 ? (
        <p className="muted">No console entries (console capture is off, or nothing was logged).</p>
      ) : (
        <TimedList
          entries={shown}
          now={now}
          onSeek={onSeek}
          label="Console entries"
          testId="console-entries"
          rowClass={(e) => `level-${e.level}`}
          row={(e) => (
            <>
              <span className="level-badge">{e.source === 'uncaught' ? 'uncaught' : e.level}</span>
              <span className="timed-text" title={e.message}>
                {e.message}
                {e.dropped !== undefined ? ` (${e.dropped} dropped before)` : ''}
              </span>
            </>
          )}
          detail={(e) =>
            e.stack === undefined ? null : (
              <details className="entry-detail">
                <summary>Stack</summary>
                <pre className="stack">{e.stack}</pre>
              </details>
            )
          }
        />
      )}
    </div>
  );
}
