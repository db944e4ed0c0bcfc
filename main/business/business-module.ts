/**
 * The lazily loaded chunk behind `business-operations.ts`: funnels (`funnels.ts`) and
 * subscriptions, payments and churn risk (`subscriptions.ts`, with `subscription-validation.ts`
 * and `churn-risk.ts`).
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import { createFunnels, type FunnelOperations } from './funnels.js';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';
import { createSubscriptions, type Subscriptions } from './subscriptions.js';
import type { ValidProperties } from './subscription-validation.js';

/** Everything the chunk serves. */
export interface BusinessModule extends FunnelOperations, Subscriptions {
  /** `remember()` of the subscription trait as `cleanProperties` encoded it (JSON text). */
  rememberEncoded(encoded: unknown): ValidProperties | undefined;
}

/** What the chunk needs from the facade. */
export interface BusinessModuleOptions {
  /** Sends one event through the facade's funnel. */
  send(event: string, properties: EventProperties | undefined): void;
  store: KeyValueStore;
  /** Prefix of the storage keys, per project. */
  keyPrefix: string;
  /** The module's clock (the time of a queued call while it is replayed). */
  now(): number;
  /** The current session's engagement score, 0–100. */
  engagementScore(): number;
  log: Logger;
}

/** Creates the funnel and subscription operations. */
export function createBusinessModule(options: BusinessModuleOptions): BusinessModule {
  const { send, now, log } = options;
  const subscriptions = createSubscriptions({ ...options, key: `${options.keyPrefix}billing` });
  return {
    ...createFunnels(send, now, log),
    ...subscriptions,
    rememberEncoded(encoded) {
      let subscription: unknown;
      try {
        subscription = JSON.parse(encoded as string);
      } catch {
        // Not JSON, so not an object (e.g. a plain string): nothing to remember, nothing sent.
      }
      return subscriptions.remember(subscription);
    },
  };
}
