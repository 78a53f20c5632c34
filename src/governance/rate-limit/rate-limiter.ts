import { type Clock, systemClock } from "../../core/index.js";
import {
  type RateLimitGroupConfig,
  type ResolvedRateLimit,
  resolveRateLimitConfig,
  UNLIMITED_RATE_LIMIT,
} from "./rate-limit-config.js";
import { RateLimitGroup, type RateLimitLease, type RateLimitStats } from "./rate-limit-group.js";

/** Options of a `RateLimiter`. */
export interface RateLimiterOptions {
  /** Limits per `rateLimitGroup`. A group that is not listed is unlimited. @default no groups */
  groups?: Map<string, RateLimitGroupConfig> | Record<string, RateLimitGroupConfig>;
  /** The time source for waits, pacing and cooldowns. @default systemClock */
  clock?: Clock;
}

/** Options of one `acquire()`. */
export interface RateLimitAcquireOptions {
  /** Aborting it removes the caller from the queue. */
  signal?: AbortSignal;
}

/**
 * What the broker needs of a rate limiter: one lease per upstream call. `RateLimiter` keeps the state
 * in this process; `PostgresRateLimiter` shares it between replicas.
 */
export interface RateLimitAdmission {
  /**
   * Waits until the group admits the caller.
   * @param group the source's `rateLimitGroup`
   * @param options `signal` to abort the wait
   * @returns a lease carrying `queueWaitMs`; release it when the call is done
   */
  acquire(group: string, options?: RateLimitAcquireOptions): Promise<RateLimitLease>;
}

/**
 * Admission control per rate-limit group: a concurrency cap, a minimum spacing between starts,
 * a strict FIFO queue with optional depth and timeout, and a cooldown after HTTP 429. Every
 * omitted dimension is unlimited. The broker takes one lease per call (cache hits take none) and
 * keeps it across that call's retries.
 * @example
 * const limiter = new RateLimiter({ groups: { ncbi: { maxConcurrentRequests: 2, rateLimitPerSecond: 3 } } });
 * const lease = await limiter.acquire("ncbi", { signal });
 * try {
 *   let response = await call();
 *   if (response.status === 429) {
 *     lease.noteRateLimited(response.headers.get("retry-after"));
 *     await lease.waitForTurn(signal);
 *     response = await call();
 *   }
 * } finally {
 *   lease.release();
 * }
 */
export class RateLimiter implements RateLimitAdmission {
  readonly #clock: Clock;
  readonly #limits = new Map<string, ResolvedRateLimit>();
  readonly #groups = new Map<string, RateLimitGroup>();

  /**
   * @param options groups and clock
   * @throws GovernanceError `INVALID_CONFIG` when a group's limit is out of range
   */
  constructor(options: RateLimiterOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    const groups = options.groups ?? {};
    const entries = groups instanceof Map ? groups.entries() : Object.entries(groups);
    for (const [name, config] of entries) this.#limits.set(name, resolveRateLimitConfig(name, config));
  }

  /**
   * Waits until the group admits the caller, in strict FIFO order.
   * @param group the source's `rateLimitGroup`; an unconfigured group is unlimited
   * @param options `signal` to abort the wait
   * @returns a lease carrying `queueWaitMs`; release it when the call is done
   * @throws GovernanceError `RATE_LIMIT_QUEUE_FULL` when the queue is at `maxQueueDepth` (retryable)
   * @throws GovernanceError `RATE_LIMIT_QUEUE_TIMEOUT` after `queueTimeoutMs` in the queue (retryable)
   * @throws the signal's reason, or GovernanceError `CANCELLED`, when aborted while waiting
   */
  acquire(group: string, options: RateLimitAcquireOptions = {}): Promise<RateLimitLease> {
    return this.#group(group).acquire(options.signal);
  }

  /**
   * A snapshot of one group.
   * @param group the group name
   * @returns `{active, queued, cooldownUntil?}`; zeros for a group never used
   */
  stats(group: string): RateLimitStats {
    return this.#groups.get(group)?.stats() ?? { active: 0, queued: 0 };
  }

  #group(name: string): RateLimitGroup {
    let group = this.#groups.get(name);
    if (!group) {
      // Unconfigured groups still get state: a 429 cooldown applies to them too.
      group = new RateLimitGroup(name, this.#limits.get(name) ?? UNLIMITED_RATE_LIMIT, this.#clock);
      this.#groups.set(name, group);
    }
    return group;
  }
}
