/**
 * Sessions (docs/decisions.md, "Session rules (`sessionTimeout`)"): a new session begins after
 * `sessionTimeout` of inactivity, on `reset()`, or when none exists. Per event the session is
 * checked against an in-memory timestamp; storage is written at most once a second (and on demand,
 * e.g. when the page is hidden), so a burst of events costs no storage access: a synchronous
 * storage access on every `track()` would cost the main thread on the hot path (same section).
 */
import { calculateBounceLikelihood, calculateEngagementScore } from './engagement.js';
import type { KeyValueStore } from './storage.js';
import type { SessionData, TrafficChannel } from '../types.js';

/** The stored part of a session: enough to continue it on the next page load. */
interface StoredSession {
  id: string;
  startTime: number;
  lastActivity: number;
  pageViews: number;
  clicks: number;
  maxScrollDepth: number;
  /** Unknown until the channel rules are loaded (they live in a lazily loaded chunk). */
  channel?: TrafficChannel;
}

/** A session and its in-memory counters. */
interface SessionState extends StoredSession {
  /** Where the session started, for the channel rules. */
  landingUrl: string;
  landingReferrer: string;
  scrollDepth: number;
  scrollEvents: number;
  clickEvents: number;
  pageChanges: number;
  events: string[];
}

/** Most event names kept in `SessionData.events`; older ones are dropped. */
const MAX_EVENT_NAMES = 500;
/** Storage is written at most this often (ms) from the per-event path. */
const PERSIST_INTERVAL_MS = 1000;

/** The session of the page. */
export interface SessionManager {
  /** Marks activity at `now` and returns the session id, starting a new session after a timeout. */
  touch(now: number): string;
  /** The id the next event will carry: the current session, or a new one after a timeout. */
  currentId(now: number): string;
  /** Counts one sent event in the session. */
  recordEvent(name: string, kind: 'page' | 'click' | 'other'): void;
  /** Counts a click on the page. */
  recordClick(now: number): void;
  /**
   * Records the scroll depth (percent) of one animation frame with scrolling; `counted: false`
   * records a measurement without a scroll (the first view of the page).
   */
  recordScroll(depth: number, now: number, counted?: boolean): void;
  /** Counts an in-page URL change. */
  recordPageChange(now: number): void;
  /** SessionData of the current session, without starting a new one. */
  data(now: number): SessionData;
  /** Starts a new session now (`reset()`). */
  restart(now: number): void;
  /** Writes the session to storage now. */
  persist(): void;
  /** Sets the channel rules; sessions get their channel from their landing page from now on. */
  setChannelDetector(detect: (url: string, referrer: string) => TrafficChannel): void;
}

/** Options of {@link createSessionManager}. */
export interface SessionOptions {
  store: KeyValueStore;
  /** Storage key of the session, per project. */
  key: string;
  /** `sessionTimeout` in ms. */
  timeout: number;
  /** Makes a session id. */
  newId: () => string;
  /** The page's URL and referrer now: the landing page of a session that starts now. */
  landing: () => { url: string; referrer: string };
  now: number;
  /**
   * Called on every change of what `data()` answers, for the subscribable session
   * (`session-state.ts`). On the per-event path: it must be cheap and must not throw.
   */
  onChange?: () => void;
}

/** Loads the session from storage, continuing it when it has not timed out. */
export function createSessionManager(options: SessionOptions): SessionManager {
  const { store, key, timeout } = options;
  const changed = options.onChange ?? ((): void => {});
  let lastPersist = Number.NEGATIVE_INFINITY;
  let detectChannel: ((url: string, referrer: string) => TrafficChannel) | undefined;
  let state = load(options.now) ?? fresh(options.now);

  function ensureChannel(): void {
    if (state.channel === undefined && detectChannel !== undefined) {
      state.channel = detectChannel(state.landingUrl, state.landingReferrer);
    }
  }

  function load(now: number): SessionState | undefined {
    try {
      const raw = store.get(key);
      if (raw === null) return undefined;
      const s = JSON.parse(raw) as Partial<StoredSession>;
      if (typeof s.id !== 'string' || typeof s.lastActivity !== 'number' || typeof s.startTime !== 'number') return undefined;
      if (now - s.lastActivity > timeout) return undefined;
      const state = fresh(s.startTime, s.id);
      state.lastActivity = s.lastActivity;
      state.pageViews = num(s.pageViews);
      state.clicks = num(s.clicks);
      state.maxScrollDepth = num(s.maxScrollDepth);
      if (typeof s.channel === 'string') state.channel = s.channel as TrafficChannel;
      return state;
    } catch {
      return undefined; // A corrupt entry starts a new session rather than breaking the page.
    }
  }

  function fresh(now: number, id = options.newId()): SessionState {
    lastPersist = Number.NEGATIVE_INFINITY;
    const landing = options.landing();
    return {
      id,
      landingUrl: landing.url,
      landingReferrer: landing.referrer,
      startTime: now,
      lastActivity: now,
      pageViews: 0,
      clicks: 0,
      maxScrollDepth: 0,
      scrollDepth: 0,
      scrollEvents: 0,
      clickEvents: 0,
      pageChanges: 0,
      events: [],
    };
  }

  function write(now: number): void {
    lastPersist = now;
    ensureChannel();
    const { id, startTime, lastActivity, pageViews, clicks, maxScrollDepth, channel } = state;
    store.set(key, JSON.stringify({ id, startTime, lastActivity, pageViews, clicks, maxScrollDepth, channel }));
  }

  /** Starts a new session when the current one timed out; another tab's live session is adopted. */
  function rollOver(now: number): void {
    if (now - state.lastActivity <= timeout) return;
    // Rare path (once per timeout), so reading storage here is fine.
    state = load(now) ?? fresh(now);
    changed();
  }

  function touch(now: number): string {
    rollOver(now);
    if (now > state.lastActivity) state.lastActivity = now;
    if (now - lastPersist >= PERSIST_INTERVAL_MS) write(now);
    return state.id;
  }

  return {
    touch,
    currentId(now) {
      rollOver(now);
      return state.id;
    },
    recordEvent(name, kind) {
      const events = state.events;
      events.push(name);
      // Amortised trim: one splice per 100 events beyond the cap, not one shift per event.
      if (events.length > MAX_EVENT_NAMES + 100) events.splice(0, events.length - MAX_EVENT_NAMES);
      if (kind === 'page') state.pageViews++;
      else if (kind === 'click') state.clickEvents++;
      changed();
    },
    recordClick(now) {
      touch(now);
      state.clicks++;
      changed();
    },
    recordScroll(depth, now, counted = true) {
      touch(now);
      if (counted) state.scrollEvents++;
      state.scrollDepth = depth;
      if (depth > state.maxScrollDepth) state.maxScrollDepth = depth;
      changed();
    },
    recordPageChange(now) {
      touch(now);
      state.pageChanges++;
      changed();
    },
    data(now) {
      ensureChannel();
      const s = state;
      const isActive = now - s.lastActivity <= timeout;
      const events = s.events.length > MAX_EVENT_NAMES ? s.events.slice(-MAX_EVENT_NAMES) : s.events.slice();
      const data: SessionData = {
        sessionId: s.id,
        startTime: s.startTime,
        duration: Math.max(0, s.lastActivity - s.startTime),
        pageViews: s.pageViews,
        clicks: s.clicks,
        scrollDepth: s.scrollDepth,
        maxScrollDepth: s.maxScrollDepth,
        isActive,
        events,
        scrollEvents: s.scrollEvents,
        clickEvents: s.clickEvents,
        pageChanges: s.pageChanges,
      };
      if (s.channel !== undefined) data.channel = s.channel;
      if (!isActive) data.endTime = s.lastActivity;
      data.engagementScore = calculateEngagementScore(data);
      data.bounceLikelihood = calculateBounceLikelihood(data);
      return data;
    },
    restart(now) {
      state = fresh(now);
      write(now);
      changed();
    },
    persist() {
      write(state.lastActivity);
    },
    setChannelDetector(detect) {
      detectChannel = detect;
      ensureChannel();
      changed();
    },
  };
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
