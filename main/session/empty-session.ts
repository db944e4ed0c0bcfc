/**
 * The empty session: a leaf, so that the session store and the table of fallback answers
 * (`operation-fallbacks.ts`, which speaks of the whole facade) can both read it without importing
 * each other.
 */
import type { SessionData } from '../types.js';

/**
 * A session with nothing in it, frozen: what the session store's snapshot is when there is no
 * session to show (on the server, before the client exists, or when the session cannot be read).
 */
export const EMPTY_SESSION: Readonly<SessionData> = Object.freeze({
  startTime: 0,
  pageViews: 0,
  clicks: 0,
  scrollDepth: 0,
  maxScrollDepth: 0,
  isActive: false,
  events: Object.freeze([]) as unknown as string[],
});
