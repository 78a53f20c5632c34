import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  type Clock,
  migratePostgresSchema,
  type PostgresDatabase,
  type PostgresListener,
  systemClock,
} from "../../core/index.js";
import { PostgresRateLimitGroup, type SharedGroupContext } from "./postgres-rate-limit-group.js";
import {
  HEARTBEAT_SQL,
  RATE_LIMIT_CHANNEL,
  RATE_LIMIT_MIGRATIONS,
  RATE_LIMIT_STORE,
  STATS_SQL,
} from "./postgres-rate-limit-schema.js";
import {
  type RateLimitGroupConfig,
  type ResolvedRateLimit,
  resolveRateLimitConfig,
  UNLIMITED_RATE_LIMIT,
} from "./rate-limit-config.js";
import type { RateLimitLease, RateLimitStats } from "./rate-limit-group.js";
import type { RateLimitAcquireOptions, RateLimitAdmission } from "./rate-limiter.js";

/** Options of `PostgresRateLimiter.open`. */
export interface PostgresRateLimiterOptions {
  /** Limits per `rateLimitGroup`; every replica should be given the same. @default no groups */
  groups?: Map<string, RateLimitGroupConfig> | Record<string, RateLimitGroupConfig> | undefined;
  /**
   * Keep one dedicated connection that `LISTEN`s for releases (`PostgresDatabase.listen`), so that a
   * waiter starts as soon as a slot frees anywhere. Without it waiters look every `pollIntervalMs`.
   * @default false
   */
  listen?: boolean | undefined;
  /** How long a lease or queued caller outlives its replica's last heartbeat, in ms. @default 10000 */
  leaseTtlMs?: number | undefined;
  /** The longest a blocked waiter sleeps before it looks again (announcements wake it sooner). @default 250 */
  pollIntervalMs?: number | undefined;
  /** Local waits: timers, queue timeouts, `queueWaitMs`. Cross-replica time is the database's. @default systemClock */
  clock?: Clock | undefined;
  /** This replica's name in lease rows. @default `<host>:<pid>:<random>` */
  replicaId?: string | undefined;
}

/**
 * Rate limits that hold for all replicas together: the same concurrency cap, pacing, FIFO queue
 * (depth and timeout) and 429 cooldown as `RateLimiter`, kept in PostgreSQL. A lease is a row with
 * an expiry that the replica's heartbeat renews every third of the TTL, so the slot of a replica that
 * dies comes back after at most the TTL. A group with neither a cap nor pacing keeps no lease rows: its
 * admission reads whether a cooldown or a queue holds it back (no lock, no write) and its release sends
 * nothing. When the database cannot be reached, `acquire` fails closed
 * with a retryable `UPSTREAM_UNAVAILABLE`: nothing is sent unlimited.
 * @example
 * const db = await openPostgres(url);
 * const limiter = await PostgresRateLimiter.open(db, { groups: { ncbi: { maxConcurrentRequests: 2 } }, listen: true });
 * const lease = await limiter.acquire("ncbi");
 * try { await call(); } finally { lease.release(); }
 * await limiter.close();
 */
export class PostgresRateLimiter implements RateLimitAdmission {
  readonly #db: PostgresDatabase;
  readonly #limits = new Map<string, ResolvedRateLimit>();
  readonly #groups = new Map<string, PostgresRateLimitGroup>();
  readonly #context: SharedGroupContext;
  readonly #leases = new Set<string>();
  readonly #waiters = new Set<string>();
  readonly #closing = new AbortController();
  #beating = false;
  /** Ends the heartbeat's pause once this replica holds nothing: an idle process is free to exit. */
  #beatPause: AbortController | undefined;
  #listener: PostgresListener | undefined;
  readonly #listens: boolean;

  private constructor(db: PostgresDatabase, options: PostgresRateLimiterOptions) {
    this.#db = db;
    const groups = options.groups ?? {};
    const entries = groups instanceof Map ? groups.entries() : Object.entries(groups);
    for (const [name, config] of entries) this.#limits.set(name, resolveRateLimitConfig(name, config));
    this.#listens = options.listen === true;
    this.#context = {
      db,
      clock: options.clock ?? systemClock,
      replica: options.replicaId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      leaseTtlMs: options.leaseTtlMs ?? 10_000,
      pollIntervalMs: options.pollIntervalMs ?? 250,
      track: (kind, id) => {
        (kind === "lease" ? this.#leases : this.#waiters).add(id);
        this.#heartbeat();
      },
      untrack: (kind, id) => {
        (kind === "lease" ? this.#leases : this.#waiters).delete(id);
        if (this.#leases.size === 0 && this.#waiters.size === 0) this.#beatPause?.abort();
      },
    };
  }

  /**
   * Creates or upgrades the schema (once across replicas) and starts listening for releases.
   * @param db the open database (the caller closes it, after `close()`)
   * @param options groups, `listen`, lease TTL, poll interval, clock
   * @returns the limiter
   * @throws GovernanceError `INVALID_CONFIG` for an out-of-range limit or a newer schema;
   *   `UPSTREAM_UNAVAILABLE` when the database cannot be reached
   */
  static async open(
    db: PostgresDatabase,
    options: PostgresRateLimiterOptions = {},
  ): Promise<PostgresRateLimiter> {
    const limiter = new PostgresRateLimiter(db, options);
    await migratePostgresSchema(db, { store: RATE_LIMIT_STORE, migrations: RATE_LIMIT_MIGRATIONS });
    await limiter.#listen();
    return limiter;
  }

  /**
   * Waits until the group admits the caller: FIFO within this replica and, by queue row order,
   * across replicas.
   * @param group the source's `rateLimitGroup`; an unconfigured group is unlimited (its 429 cooldown is shared)
   * @param options `signal` to abort the wait
   * @returns a lease carrying `queueWaitMs`; release it when the call is done
   * @throws GovernanceError `RATE_LIMIT_QUEUE_FULL` (waiters of all replicas count) or
   *   `RATE_LIMIT_QUEUE_TIMEOUT` (retryable); `UPSTREAM_UNAVAILABLE` (retryable) when the database
   *   cannot be reached; `CANCELLED` after `close()`; the signal's reason when aborted
   */
  acquire(group: string, options: RateLimitAcquireOptions = {}): Promise<RateLimitLease> {
    return this.#group(group).acquire(options.signal);
  }

  /**
   * A snapshot of one group across all replicas, by the database clock.
   * @param group the group name
   * @returns live leases, queued callers and the cooldown end (epoch ms) while one runs; a group with
   *   neither `maxConcurrentRequests` nor pacing counts no leases (its admissions write no row)
   */
  async stats(group: string): Promise<RateLimitStats> {
    const [row] = await this.#db.query<{ active: number; queued: number; cooldown_until: number | null }>(
      STATS_SQL,
      [group],
    );
    const stats: RateLimitStats = { active: row?.active ?? 0, queued: row?.queued ?? 0 };
    if (row?.cooldown_until != null) stats.cooldownUntil = Math.round(Number(row.cooldown_until));
    return stats;
  }

  /**
   * Refuses waiting and later callers (`CANCELLED`), stops the heartbeat and the listener. Leases
   * still held are released by their callers, or expire. Does not close the database. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    for (const group of this.#groups.values()) group.close();
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.close().catch(() => {});
  }

  #group(name: string): PostgresRateLimitGroup {
    let group = this.#groups.get(name);
    if (!group) {
      group = new PostgresRateLimitGroup(name, this.#limits.get(name) ?? UNLIMITED_RATE_LIMIT, this.#context);
      this.#groups.set(name, group);
      if (this.#closing.signal.aborted) group.close();
    }
    return group;
  }

  /** Renews this replica's rows every third of the TTL while it has any. */
  #heartbeat(): void {
    if (this.#beating || this.#closing.signal.aborted) return;
    this.#beating = true;
    const { clock, leaseTtlMs } = this.#context;
    void (async () => {
      try {
        while (!this.#closing.signal.aborted && (this.#leases.size > 0 || this.#waiters.size > 0)) {
          const pause = new AbortController();
          this.#beatPause = pause;
          await clock
            .sleep(leaseTtlMs / 3, AbortSignal.any([this.#closing.signal, pause.signal]))
            .catch(() => {});
          if (this.#closing.signal.aborted) break;
          // Woken because the last lease went: the loop ends, unless a lease came meanwhile (renewed later).
          if (pause.signal.aborted) continue;
          // A failed beat is tried again at the next one; rows not renewed within the TTL expire.
          await this.#db
            .query(HEARTBEAT_SQL, [arrayLiteral(this.#leases), arrayLiteral(this.#waiters), leaseTtlMs])
            .catch(() => {});
        }
      } finally {
        this.#beating = false;
      }
    })();
  }

  /** Starts listening; while it cannot, waiters poll and it tries again after a pause. */
  async #listen(): Promise<void> {
    if (!this.#listens || this.#closing.signal.aborted) return;
    const pause = this.#context.pollIntervalMs * 4;
    try {
      const listener = await this.#db.listen(
        RATE_LIMIT_CHANNEL,
        {
          onNotification: (group) => this.#groups.get(group)?.wake(),
          // Announcements missed while not listening: everyone looks again.
          onConnect: () => {
            for (const group of this.#groups.values()) group.wake();
          },
          onError: () => {},
        },
        { reconnectDelayMs: pause },
      );
      if (this.#closing.signal.aborted) await listener.close();
      else this.#listener = listener;
    } catch {
      this.#context.clock.sleep(pause, this.#closing.signal).then(
        () => this.#listen(),
        () => {},
      );
    }
  }
}

function arrayLiteral(ids: Set<string>): string {
  return `{${[...ids].join(",")}}`;
}
