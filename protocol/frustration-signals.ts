/**
 * The event types of the frustration signals (docs/protocol.md, "Frustration signals"): ordinary
 * events on the wire, sent by the browser client's automatic click tracking, counted by the
 * `frustration` report and listed by the dashboard. One definition for the client, the server and
 * the dashboard.
 */
export const FRUSTRATION_SIGNALS = ['rage_click', 'dead_click', 'error_click'] as const;

/** A frustration signal's event type. */
export type FrustrationSignal = (typeof FRUSTRATION_SIGNALS)[number];
