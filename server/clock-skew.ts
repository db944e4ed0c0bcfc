/**
 * Clock-skew correction (DESIGN.md "Clock skew"). The client stamps each request with its own
 * clock (`X-Sent-At`, or `sent_at` on a beacon); the difference to the server's clock on arrival
 * is the client's skew plus the transit time. Beyond `thresholdMs` the client's clock is taken to
 * be wrong and event times are shifted by the measured skew; the original is kept.
 */
export interface SkewCorrection {
  /** Milliseconds to add to client timestamps; 0 when no correction applies. */
  offsetMs: number;
}

/** Default threshold beyond which a client clock is corrected. */
export const DEFAULT_SKEW_THRESHOLD_MS = 10_000;

/** Measures the skew of one request; `sentAt` is the raw header or query value. */
export function measureSkew(sentAt: string | undefined, receivedAt: number, thresholdMs: number): SkewCorrection {
  if (!sentAt) return { offsetMs: 0 };
  const sent = Date.parse(sentAt);
  if (Number.isNaN(sent)) return { offsetMs: 0 };
  const offset = receivedAt - sent;
  return Math.abs(offset) > thresholdMs ? { offsetMs: offset } : { offsetMs: 0 };
}
