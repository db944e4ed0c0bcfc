/**
 * What each synchronous operation answers when it cannot answer for real: when it threw (the
 * facade's guard) or before the client exists (the React provider's stand-in). One table, so both
 * answer alike.
 */
import type { Analytics } from './analytics.js';
import type { SessionData } from './types.js';

/** The operations that answer synchronously. */
export type SyncOperations = Omit<Analytics, 'config' | 'track' | 'flush' | 'getDeliveryStats' | 'shutdown'>;

/** A session with nothing in it. */
export function emptySession(): SessionData {
  return { startTime: 0, pageViews: 0, clicks: 0, scrollDepth: 0, maxScrollDepth: 0, isActive: false, events: [] };
}

/** The fallback answers (operations not listed answer undefined). */
export const OPERATION_FALLBACKS: { [K in keyof SyncOperations]?: ReturnType<SyncOperations[K]> } = {
  getUserId: null,
  getAnonymousId: '',
  getSessionId: '',
  getSessionData: emptySession(),
  getActiveSession: emptySession(),
  calculateEngagementScore: 0,
  getQueueSize: 0,
  isRecordingActive: false,
  calculateChurnRisk: { risk_score: 0, risk_category: 'low', factors: {} },
  getSubscriptionData: null,
  getVariant: null,
  isInVariant: false,
  getExperimentAssignments: [],
  getFunnelState: undefined,
};
