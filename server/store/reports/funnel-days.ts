import type { Dialect, Values } from './dialect.js';
import type { FunnelStepSpec, ReportQuery } from '../report-store.js';
import { type SourceContext, stepRawRows, stepsSource } from './rollup-queries.js';
import { daySql } from './rollup-schema.js';
import { rawMask, reachedSteps } from './report-funnel.js';
import { type SessionDaysSpec, flagListed } from './session-days.js';

/*
 * A funnel as a report over sessions kept per day (`session-days.ts`; docs/decisions.md, "Kept
 * funnels and sessions"). A session's piece of a day is its step masks that day, in (time, event
 * id) order, comma-separated: the steps' rows of `rollup_steps` for clean days, of the events for
 * the rest. A day's total is how many of its one-day sessions reached each step, folded in the
 * database as a count per distinct sequence; a spanning session's pieces joined in day order are
 * its sequence over the range, walked as the funnel walks one.
 */

/** The key of a funnel's kept rows: its steps, in order. */
export const funnelKey = (steps: readonly FunnelStepSpec[]): string => `funnel ${JSON.stringify(steps.map((step) => [step.kind, step.value]))}`;

/** The funnel of `steps` as a report over sessions; values through `context`. */
export function funnelDays(dialect: Dialect, q: ReportQuery, steps: readonly FunnelStepSpec[], context: (v: Values) => SourceContext): SessionDaysSpec {
  /** Each session's masks per day, in time and then byte order of the event id: `day, session_id, piece`. */
  const masksByDay = (source: string) =>
    `SELECT day, session_id, ${dialect.orderedConcat('mask', `timestamp, ${dialect.byteOrder('event_id')}`)} AS piece
     FROM (SELECT ${daySql('timestamp')} AS day, session_id, timestamp, event_id, mask FROM (${source}) r) r GROUP BY day, session_id`;
  const walk = (masks: string): number => reachedSteps(masks, steps.length);
  return {
    key: funnelKey(steps),
    size: steps.length,
    dayPieces: (v, first, end, list) =>
      `SELECT day, session_id, piece, spanning FROM (${flagListed(
        dialect,
        `(${masksByDay(stepsSource(q, { days: { first, end, dirty: [] }, raw: [] }, context(v), steps, () => ''))})`,
        'session_id',
        list,
      )}) x`,
    rawPieces(v, raw) {
      if (raw.length === 0) return null;
      const s = context(v);
      const mask = rawMask(steps, s);
      return masksByDay(raw.map(([from, to]) => stepRawRows(s, from, to, mask)).join('\n UNION ALL '));
    },
    fold: 'SELECT day, piece, COUNT(*) AS n FROM g1 GROUP BY day, piece',
    addFolded(total, masks, n) {
      const depth = walk(masks);
      for (let k = 0; k < depth; k++) total[k]! += n;
    },
    addWhole(answer, pieces) {
      const depth = walk(pieces.join(','));
      for (let k = 0; k < depth; k++) answer[k]! += 1;
    },
  };
}
