/**
 * A bound on the bytes held by requests in progress, e.g. recording chunks between reading and
 * committing: a request takes its share before the expensive work and gives it back after, and one
 * that does not fit is refused rather than queued, so memory stays bounded however many arrive.
 */
export interface ByteBudget {
  /** Takes `bytes` when they fit; false leaves the budget unchanged. */
  take(bytes: number): boolean;
  /** Gives back what one {@link take} took. */
  give(bytes: number): void;
  /** Bytes taken now. */
  readonly inUse: number;
}

/**
 * Creates a budget of `limitBytes`. One request alone always fits, even a larger one, so the
 * budget never refuses a body that the size limit allowed on an idle server.
 */
export function createByteBudget(limitBytes: number): ByteBudget {
  let inUse = 0;
  return {
    take(bytes) {
      if (inUse > 0 && inUse + bytes > limitBytes) return false;
      inUse += bytes;
      return true;
    },
    give(bytes) {
      inUse = Math.max(0, inUse - bytes);
    },
    get inUse() {
      return inUse;
    },
  };
}
