/** Rate and burst of one token bucket. */
export interface RateLimit {
  /** Tokens added per second: the sustained rate allowed. */
  ratePerSecond: number;
  /** Most tokens a bucket holds: the largest burst allowed after a quiet period. */
  burst: number;
}

/** Options of {@link createTokenBuckets}. */
export interface TokenBucketOptions extends RateLimit {
  /**
   * Most keys tracked at once. Beyond it the least recently used bucket is forgotten, which only
   * ever errs towards letting a caller through (a forgotten bucket starts full again).
   * @default 100000
   */
  maxKeys?: number;
  /** Clock in ms. @default Date.now */
  now?: () => number;
}

/** A set of token buckets, one per key (a project, a client address). */
export interface TokenBuckets {
  /** Takes one token from `key`'s bucket: 0 when granted, else the ms until a token is there. */
  take(key: string): number;
  /** Keys tracked now. */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Creates token buckets that start full. Memory stays bounded: the map is kept in order of last
 * use, so buckets idle long enough to be full again are dropped from its front as it is used (a
 * full bucket is the same as no bucket), and `maxKeys` caps it even under a flood of new keys.
 */
export function createTokenBuckets(options: TokenBucketOptions): TokenBuckets {
  const rate = options.ratePerSecond;
  const burst = Math.max(1, options.burst);
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`ratePerSecond must be a positive number, not ${rate}.`);
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? (() => Date.now());
  const perMs = rate / 1000;
  /** Idle time after which any bucket is full again. */
  const refillMs = burst / perMs;
  const buckets = new Map<string, Bucket>();

  function forgetIdle(at: number): void {
    for (const [key, bucket] of buckets) {
      if (at - bucket.updatedAt < refillMs && buckets.size <= maxKeys) break;
      buckets.delete(key);
    }
  }

  return {
    take(key) {
      const at = now();
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        bucket = { tokens: burst, updatedAt: at };
      } else {
        buckets.delete(key);
        bucket.tokens = Math.min(burst, bucket.tokens + Math.max(0, at - bucket.updatedAt) * perMs);
        bucket.updatedAt = at;
      }
      buckets.set(key, bucket);
      forgetIdle(at);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - bucket.tokens) / perMs);
    },
    get size() {
      return buckets.size;
    },
  };
}
