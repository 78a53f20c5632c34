import { GovernanceError } from "../../core/index.js";

/**
 * The limits of one rate-limit group, as a source manifest's `governance` block declares them.
 * Every omitted field is unlimited; nothing is invented.
 */
export interface RateLimitGroupConfig {
  /** At most this many leases are active at once (an integer >= 1). */
  maxConcurrentRequests?: number;
  /** Minimum spacing in ms between two starts (admissions or retry attempts) in the group. */
  minIntervalMs?: number;
  /** Starts per second (> 0); spacing is 1000 / rate ms. With `minIntervalMs` too, the larger spacing wins. */
  rateLimitPerSecond?: number;
  /** How many callers may wait (an integer >= 0); 0 means a caller that cannot start at once is refused. */
  maxQueueDepth?: number;
  /** How long in ms a caller may wait in the queue before it is refused. */
  queueTimeoutMs?: number;
}

/** A group's limits with every dimension resolved (unlimited is `Infinity`, `0` or `undefined`). */
export interface ResolvedRateLimit {
  maxConcurrent: number;
  intervalMs: number;
  maxQueueDepth: number;
  queueTimeoutMs: number | undefined;
}

/** The limits of a group that has no configuration. */
export const UNLIMITED_RATE_LIMIT: ResolvedRateLimit = {
  maxConcurrent: Number.POSITIVE_INFINITY,
  intervalMs: 0,
  maxQueueDepth: Number.POSITIVE_INFINITY,
  queueTimeoutMs: undefined,
};

/**
 * Checks a group's configuration and fills omitted dimensions with "unlimited".
 * @param group the group name, for the error message
 * @param config the declared limits
 * @returns the resolved limits
 * @throws GovernanceError `INVALID_CONFIG` when a value is out of range (the message names the field and the fix)
 */
export function resolveRateLimitConfig(group: string, config: RateLimitGroupConfig): ResolvedRateLimit {
  const check = (field: keyof RateLimitGroupConfig, ok: (v: number) => boolean, expected: string) => {
    const value = config[field];
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !ok(value)) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `Rate-limit group '${group}': ${field} is ${String(value)}; use ${expected}, or omit it for no limit.`,
        { data: { group, field, value } },
      );
    }
    return value;
  };
  const isCount = (min: number) => (v: number) => Number.isSafeInteger(v) && v >= min;
  const isDuration = (v: number) => Number.isFinite(v) && v >= 0;

  const maxConcurrent = check("maxConcurrentRequests", isCount(1), "an integer >= 1");
  const minIntervalMs = check("minIntervalMs", isDuration, "a number of ms >= 0");
  const perSecond = check("rateLimitPerSecond", (v) => Number.isFinite(v) && v > 0, "a number > 0");
  const maxQueueDepth = check("maxQueueDepth", isCount(0), "an integer >= 0");
  const queueTimeoutMs = check("queueTimeoutMs", isDuration, "a number of ms >= 0");
  return {
    maxConcurrent: maxConcurrent ?? Number.POSITIVE_INFINITY,
    intervalMs: Math.max(minIntervalMs ?? 0, perSecond === undefined ? 0 : 1000 / perSecond),
    maxQueueDepth: maxQueueDepth ?? Number.POSITIVE_INFINITY,
    queueTimeoutMs,
  };
}
