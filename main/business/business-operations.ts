/**
 * Funnel, subscription and payment operations on the main thread. Their logic (state machines,
 * validation, the churn formula) lives in `business-module.ts`, a chunk loaded once the page is
 * idle after the client started, or at the first call, so it stays out of the main-thread bundle
 * and out of the page's start-up; these forward to it (`deferred-module.ts`).
 *
 * Until the chunk arrives (normally within the first second of the page), calls are queued and
 * applied in order, with their original time, when it arrives (`flush()` waits for them), and
 * the reads answer their fallbacks from the one table (`operation-fallbacks.ts`): `getFunnelState()`
 * undefined, `getSubscriptionData()` null and `calculateChurnRisk()` a neutral zero risk.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { BusinessModule } from './business-module.js';
import { createDeferredModule } from '../deferred-module.js';
import { fallbacksOf } from '../operation-fallbacks.js';
import type { FunnelOperations } from './funnels.js';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';
import type { SubscriptionOperations } from './subscriptions.js';
import type { ValidProperties } from './subscription-validation.js';

/** The operations plus what the facade needs. */
export interface Business extends FunnelOperations, SubscriptionOperations {
  /**
   * Validates and remembers the subscription given to `identify()` (JSON-encoded, as
   * `cleanProperties` made it), then calls `then` with the validated copy and the call's time.
   */
  remember(encoded: unknown, then: (valid: ValidProperties | undefined, at: number) => void): void;
  /** Forgets the subscription data (`reset()`, another user). */
  forget(): void;
  /** Resolves once the calls made so far were applied; undefined when none wait. */
  settled(): Promise<void> | undefined;
}

/** What the business module needs from the facade. */
export interface BusinessOptions {
  /** Sends one event through the facade's funnel, stamped with `at` (ms). */
  send(event: string, properties: EventProperties | undefined, at: number): void;
  store: KeyValueStore;
  /** Prefix of the storage keys, per project. */
  keyPrefix: string;
  now(): number;
  /** The current session's engagement score, 0–100. */
  engagementScore(): number;
  log: Logger;
  /** When to begin loading the module (`DeferredModuleOptions.schedule`); @default at once */
  schedule?: (start: () => void) => void;
}

/** Starts loading the business module and returns its operations. */
export function createBusinessOperations(options: BusinessOptions): Business {
  const deferred = createDeferredModule<BusinessModule>({
    load: (now) =>
      import('./business-module.js').then(({ createBusinessModule }) =>
        createBusinessModule({ ...options, now, send: (event, properties) => options.send(event, properties, now()) }),
      ),
    calls: (
      'trackFunnelStep startFunnel advanceFunnel completeFunnel abandonFunnel forget trackSubscription ' +
      'trackSubscriptionStarted trackSubscriptionPaused trackSubscriptionReactivated trackSubscriptionUpgraded ' +
      'trackSubscriptionDowngraded trackSubscriptionCanceled trackTrialStarted trackTrialConverted trackTrialExpired ' +
      'trackPaymentFailed trackPaymentSucceeded'
    ).split(' '),
    reads: fallbacksOf('getFunnelState', 'getSubscriptionData', 'calculateChurnRisk'),
    now: options.now,
    log: options.log,
    name: 'funnels and subscriptions',
    schedule: options.schedule,
  });
  return {
    ...deferred.operations,
    remember: (encoded, then) => deferred.run((m, at) => then(m.rememberEncoded(encoded), at)),
    settled: deferred.settled,
  };
}
