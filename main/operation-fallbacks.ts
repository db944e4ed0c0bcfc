/**
 * What each synchronous operation answers when it cannot answer for real: when it threw (the
 * facade's guard), before the client exists (the React provider's stand-in), or before the lazily
 * loaded module behind it arrived (`deferred-module.ts`: funnels, subscriptions, experiments). One
 * table, so every one of them answers alike; read it through {@link fallbackOf} or
 * {@link fallbacksOf}, never by copying a value out of it.
 */
import type { Analytics } from './analytics.js';
import { EMPTY_SESSION } from './session/empty-session.js';

/** The operations that answer synchronously. */
export type SyncOperations = Omit<Analytics, 'config' | 'session' | 'track' | 'flush' | 'getDeliveryStats' | 'shutdown'>;

/**
 * The fallback answers (operations not listed answer undefined). Never handed out as they are:
 * {@link fallbackOf} copies, so an app that changes an answer changes no one else's.
 */
export const OPERATION_FALLBACKS: { readonly [K in keyof SyncOperations]?: ReturnType<SyncOperations[K]> } = {
  getUserId: null,
  getAnonymousId: '',
  getSessionId: '',
  getSessionData: EMPTY_SESSION,
  getActiveSession: EMPTY_SESSION,
  calculateEngagementScore: 0,
  getQueueSize: 0,
  isRecordingActive: false,
  calculateChurnRisk: { risk_score: 0, risk_category: 'low', factors: {} },
  getSubscriptionData: null,
  getVariant: null,
  isInVariant: false,
  getExperimentAssignments: [],
  getFunnelState: undefined,
  hasOptedOut: false,
  getRegistered: {},
};

/** The fallback answer of the operation `name`: a fresh copy of an object, a primitive as it is. */
export function fallbackOf(name: string): unknown {
  const value: unknown = OPERATION_FALLBACKS[name as keyof SyncOperations];
  return typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value;
}

/** The fallbacks of `names`, for a lazily loaded module's reads (`deferred-module.ts` copies them per read). */
export function fallbacksOf(...names: Array<keyof SyncOperations>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) picked[name] = OPERATION_FALLBACKS[name];
  return picked;
}
