/**
 * Consent (docs/decisions.md, "Consent"): the state a client starts in, and what is stored of the
 * visitor's choice. While consent is not granted, the client holds its events in memory (pending) or
 * drops them (denied), writes nothing to storage and sends nothing; the facade applies that
 * (`create-analytics.ts`), this module only decides and remembers.
 */

/** Whether the visitor agreed to be counted (`AnalyticsConfig.consent`). */
export type ConsentState = 'granted' | 'pending' | 'denied';

/**
 * The state a client starts in: the visitor's stored choice, else denied when Do-Not-Track or
 * Global Privacy Control is on and respected, else the configured state.
 * @param stored - what {@link consentKey} holds ('granted' or 'denied'; anything else is no choice)
 */
export function initialConsent(configured: ConsentState, respectDoNotTrack: boolean, stored: string | null, nav: Navigator | undefined): ConsentState {
  if (stored === 'granted' || stored === 'denied') return stored;
  if (respectDoNotTrack && nav !== undefined && (nav.doNotTrack === '1' || (nav as { globalPrivacyControl?: unknown }).globalPrivacyControl === true)) {
    return 'denied';
  }
  return configured;
}

/** The storage key of the visitor's choice. */
export const consentKey = (keyPrefix: string): string => `${keyPrefix}consent`;

/**
 * Removes what the client stored under `keyPrefix` (ids, session, super properties, subscription
 * data, experiment assignments, recording offsets), except the choice itself: after `optOut()`
 * the device keeps nothing of the visitor but the fact that they said no.
 */
export function forgetStored(getStorage: () => Storage | undefined, keyPrefix: string): void {
  try {
    const storage = getStorage();
    if (storage === undefined) return;
    for (let i = storage.length - 1; i >= 0; i--) {
      const key = storage.key(i);
      if (key !== null && key.startsWith(keyPrefix) && key !== consentKey(keyPrefix)) storage.removeItem(key);
    }
  } catch {
    // Storage that cannot be reached, listed or written holds nothing this client could remove.
  }
}
