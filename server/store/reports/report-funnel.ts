import type { FunnelWalk } from './dialect.js';
import type { FunnelStepSpec, ReportQuery } from '../report-store.js';
import { type DayPlan, type SourceContext, stepKeyRows, stepRawRows, stepsSource } from './rollup-queries.js';

/*
 * The funnel's SQL (docs/decisions.md, "Report definitions" and "Daily rollups"). Step k is reached
 * by the first event matching it after the event that reached step k − 1, in (time, event id)
 * order. Two statements give that count, each exact; a store's `Dialect` (`report-queries.ts`) names the one its
 * database runs faster:
 *
 * - `sequences`: each session becomes the sequence of its matching events' step masks, by an
 *   ordered aggregate, and sessions are counted per distinct sequence; the walk along a sequence is
 *   {@link reachedSteps}. One scan and one grouping by session whatever the number of steps.
 * - `first-matches`: step by step, each session's first match after its previous step's event
 *   (`DISTINCT ON` the session, in time and id order), joined to the previous step's sessions by
 *   hash. PostgreSQL before 16 sorts the rows of every group of an ordered aggregate on their own;
 *   this form has no ordered aggregate, and reads only the rows of each step's key.
 */


/** A funnel's statement, and how its rows give the sessions that reached each step. */
export interface FunnelStatement {
  sql: string;
  reached(rows: ReadonlyArray<Record<string, unknown>>): number[];
}

/** The events' condition of a step, on the columns of `events`. */
const rawMatch = (step: FunnelStepSpec, s: SourceContext): string =>
  step.kind === 'event' ? `event_type = ${s.add(step.value)}` : `event_type = 'page_view' AND path = ${s.add(step.value)}`;

/** The raw rows' mask: bit k set when an event matches step k. */
export const rawMask = (steps: readonly FunnelStepSpec[], s: SourceContext) => (): string =>
  steps.map((step, k) => `CASE WHEN ${rawMatch(step, s)} THEN ${2 ** k} ELSE 0 END`).join(' + ');

/**
 * The statement of a funnel over `plan` (null: the range read from the events alone), values added
 * through `s` in the order of the text.
 */
export function funnelStatement(
  walk: FunnelWalk,
  q: ReportQuery,
  steps: readonly FunnelStepSpec[],
  plan: DayPlan | null,
  s: SourceContext,
): FunnelStatement {
  return walk === 'sequences' ? sequencesStatement(q, steps, plan, s) : firstMatchesStatement(q, steps, plan, s);
}

function sequencesStatement(q: ReportQuery, steps: readonly FunnelStepSpec[], plan: DayPlan | null, s: SourceContext): FunnelStatement {
  // Read once, `m` is not materialized: the database groups its rows as it reads them, without
  // writing them to a temporary table first (docs/decisions.md, "Daily rollups").
  const matched = plan !== null ? stepsSource(q, plan, s, steps, rawMask(steps, s)) : stepRawRows(s, q.from, q.to, rawMask(steps, s));
  return {
    sql: `WITH m AS NOT MATERIALIZED (${matched}),
         seq AS (
           SELECT ${s.dialect.orderedConcat('mask', 'timestamp, event_id')} AS masks FROM m GROUP BY session_id)
         SELECT masks, COUNT(*) AS sessions FROM seq GROUP BY masks`,
    reached(rows) {
      const reached = steps.map(() => 0);
      for (const row of rows) {
        const depth = reachedSteps(String(row.masks), steps.length);
        for (let k = 0; k < depth; k++) reached[k]! += Number(row.sessions);
      }
      return reached;
    },
  };
}

function firstMatchesStatement(q: ReportQuery, steps: readonly FunnelStepSpec[], plan: DayPlan | null, s: SourceContext): FunnelStatement {
  const ctes: string[] = [];
  // The events of the range's days not served by rollups (all of it without a plan), read once:
  // each step takes its rows from there by its bit.
  const rawRanges = plan === null ? [[q.from, q.to] as [number, number]] : plan.raw;
  if (rawRanges.length > 0) {
    const mask = rawMask(steps, s);
    ctes.push(`raw AS MATERIALIZED (${rawRanges.map(([from, to]) => stepRawRows(s, from, to, mask)).join('\n  UNION ALL ')})`);
  }
  const eventId = (table: string) => s.dialect.byteOrder(`${table}.event_id`);
  steps.forEach((step, k) => {
    const parts: string[] = [];
    if (plan !== null && plan.days !== null) parts.push(stepKeyRows(q, plan.days, s, step));
    if (rawRanges.length > 0) parts.push(`SELECT session_id, timestamp, event_id FROM raw WHERE (mask & ${2 ** k}) <> 0`);
    const after =
      k === 0 ? '' : ` JOIN s${k - 1} p ON p.session_id = r.session_id AND (r.timestamp, ${eventId('r')}) > (p.timestamp, ${eventId('p')})`;
    ctes.push(`s${k} AS (SELECT DISTINCT ON (r.session_id) r.session_id, r.timestamp, r.event_id
      FROM (${parts.join('\n  UNION ALL ')}) r${after}
      ORDER BY r.session_id, r.timestamp, ${eventId('r')})`);
  });
  return {
    sql: `WITH ${ctes.join(',\n')}
      SELECT ${steps.map((_, k) => `(SELECT COUNT(*) FROM s${k}) AS reached_${k}`).join(', ')}`,
    reached: (rows) => steps.map((_, k) => Number(rows[0]?.[`reached_${k}`] ?? 0)),
  };
}

/**
 * How far a session gets along a funnel of `steps` steps, given its events' step masks in order
 * (comma-separated; bit k set when the event matches step k): step k is reached by the first event
 * matching it after the event that reached step k − 1. Taking the earliest match at each step
 * reaches as far as any other choice would.
 */
export function reachedSteps(masks: string, steps: number): number {
  let k = 0;
  for (const text of masks.split(',')) {
    if (k < steps && (Number(text) & (2 ** k)) !== 0) k++;
  }
  return k;
}
