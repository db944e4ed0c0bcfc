/**
 * Engagement and bounce estimates of a session: deterministic formulas over SessionData's counters,
 * so the same session always scores the same and the score can be recomputed on the server.
 */

/** The counters the formulas read. */
export interface EngagementInput {
  /** Milliseconds from session start to the last activity. */
  duration?: number;
  pageViews: number;
  clicks: number;
  maxScrollDepth: number;
  /** Events sent in the session. */
  events: readonly unknown[];
}

/**
 * Engagement score, 0–100 (rounded), the sum of five capped parts:
 *
 * - time: 30 × min(duration / 5 min, 1)
 * - page views: 20 × min((pageViews − 1) / 4, 1), so a single page view adds nothing
 * - clicks: 20 × min(clicks / 10, 1)
 * - scroll: 20 × maxScrollDepth / 100
 * - events: 10 × min(events / 20, 1)
 */
export function calculateEngagementScore(input: EngagementInput): number {
  const time = 30 * clamp01((input.duration ?? 0) / 300_000);
  const pages = 20 * clamp01((input.pageViews - 1) / 4);
  const clicks = 20 * clamp01(input.clicks / 10);
  const scroll = 20 * clamp01(input.maxScrollDepth / 100);
  const events = 10 * clamp01(input.events.length / 20);
  return Math.round(time + pages + clicks + scroll + events);
}

/**
 * Likelihood that the session is a bounce, percent 0–100 (rounded): 100 − engagement score,
 * halved once a second page view has happened (a second page view is by definition not a bounce,
 * but the session can still be shallow).
 */
export function calculateBounceLikelihood(input: EngagementInput): number {
  const remaining = 100 - calculateEngagementScore(input);
  return Math.round(input.pageViews > 1 ? remaining / 2 : remaining);
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
