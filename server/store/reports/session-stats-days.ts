import type { Dialect, Values } from './dialect.js';
import type { ReportQuery } from '../report-store.js';
import type { DayPlan, SourceContext } from './rollup-queries.js';
import { daySql } from './rollup-schema.js';
import { type SessionDaysSpec, flagListed } from './session-days.js';

/*
 * The sessions report with one filter as a report over sessions kept per day (`session-days.ts`;
 * docs/decisions.md, "Kept funnels and sessions"). A session counts when it has an event of the
 * filter; its duration is from its first to its last such event in the range, its page views
 * those among them, a bounce at most one. A session's piece of a day is `first,last,page views`
 * of its events of the filter that day: from the rollup rows of the filter's value for clean
 * days, grouped by the session's id in the key dictionary (its text looked up only for the few
 * sessions that span days), from the events for the rest. A day's total is `sessions, bounces,
 * duration, page views` over its one-day sessions, summed in the database.
 */

/** The key of the kept rows of the sessions report with the filter of `q` (its one filter). */
export const sessionStatsKey = (q: ReportQuery): string =>
  `sessions ${JSON.stringify(Object.entries(q.filters).filter(([, value]) => value !== undefined))}`;

/**
 * The sessions report of `q` as a report over sessions: `sessions, bounces, duration,
 * page views`. `visits` is the report's visits of its filter over a plan (`visitsSource`);
 * `context` gives the raw conditions, its filter included.
 */
export function sessionStatsDays(
  dialect: Dialect,
  q: ReportQuery,
  visits: (v: Values, plan: DayPlan) => string,
  context: (v: Values) => SourceContext,
): SessionDaysSpec {
  const piece = (f: string, l: string, pv: string) => `CAST(${f} AS TEXT) || ',' || CAST(${l} AS TEXT) || ',' || CAST(${pv} AS TEXT)`;
  return {
    key: sessionStatsKey(q),
    size: 4,
    // The spanning sessions' ids in the dictionary, each looked up through its index.
    spanList: (v, spans) =>
      `SELECT (SELECT k.id FROM rollup_keys k WHERE k.project_id = ${v.add(q.projectId)} AND k.key = sp.session_id) AS key, sp.session_id AS text FROM ${spans} sp`,
    dayPieces(v, first, end, list) {
      const sessions = `(SELECT day, session_id AS sid, MIN(first_ts) AS f, MAX(last_ts) AS l, SUM(page_views) AS pv
        FROM (${visits(v, { days: { first, end, dirty: [] }, raw: [] })}) r WHERE session_id IS NOT NULL GROUP BY day, session_id)`;
      return `SELECT y.day, y.spanning, y.listed AS session_id, ${piece('y.f', 'y.l', 'y.pv')} AS piece, y.f, y.l, y.pv
        FROM (${flagListed(dialect, sessions, 'sid', list)}) y`;
    },
    rawPieces(v, raw) {
      if (raw.length === 0) return null;
      const s = context(v);
      const events = raw
        .map(([from, to]) => `SELECT timestamp, session_id, CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END AS pv FROM events WHERE ${s.rawWhere(from, to)} AND session_id IS NOT NULL`)
        .join('\n UNION ALL ');
      return `SELECT day, session_id, ${piece('f', 'l', 'pv')} AS piece FROM (
          SELECT ${daySql('timestamp')} AS day, session_id, MIN(timestamp) AS f, MAX(timestamp) AS l, SUM(pv) AS pv FROM (${events}) e
          GROUP BY ${daySql('timestamp')}, session_id) r`;
    },
    fold: `SELECT day, ${piece('COUNT(*)', 'SUM(CASE WHEN pv <= 1 THEN 1 ELSE 0 END)', 'SUM(l - f)')} || ',' || CAST(SUM(pv) AS TEXT) AS piece, 0 AS n
      FROM g1 GROUP BY day`,
    addFolded(total, sums) {
      sums.split(',').forEach((n, k) => (total[k]! += Number(n)));
    },
    addWhole(answer, pieces) {
      let first = Infinity;
      let last = -Infinity;
      let pageViews = 0;
      for (const p of pieces) {
        const [f, l, pv] = p.split(',').map(Number) as [number, number, number];
        first = Math.min(first, f);
        last = Math.max(last, l);
        pageViews += pv;
      }
      answer[0]! += 1;
      answer[1]! += pageViews <= 1 ? 1 : 0;
      answer[2]! += last - first;
      answer[3]! += pageViews;
    },
  };
}
