import { parseRetryAfterMs } from "../../contract/index.js";
import type { Clock, PostgresDatabase } from "../../core/index.js";
import { GovernanceError } from "../../core/index.js";
import { CLEAR_SQL, LEAVE_SQL, RELEASE_SQL } from "./postgres-rate-limit-schema.js";
import type { ResolvedRateLimit } from "./rate-limit-config.js";
import type { RateLimitLease } from "./rate-limit-group.js";

/** The default cooldown after a 429 without a usable `Retry-After`, as in one process. */
const DEFAULT_COOLDOWN_MS = 1000;

/** What one group of a replica shares with its `PostgresRateLimiter`. */
export interface SharedGroupContext {
  readonly db: PostgresDatabase;
  readonly clock: Clock;
  /** This replica's id in lease and waiter rows. */
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly pollIntervalMs: number;
  /** Ids of this replica's live lease and waiter rows, which the heartbeat renews. */
  track(kind: "lease" | "waiter", id: string): void;
  untrack(kind: "lease" | "waiter", id: string): void;
}

interface Waiter {
  readonly enqueuedAt: number;
  /** The waiter's row, once the database has queued it. */
  rowId: string | undefined;
  left: boolean;
  admit(lease: RateLimitLease): void;
  fail(reason: unknown): void;
}

type Outcome = "admitted" | "queue_full" | "behind" | "full" | "paced" | "gone" | "started" | "waiting";
interface Decision {
  outcome: Outcome;
  id: string | null;
  wait_ms: number | null;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new GovernanceError("CANCELLED", "The caller cancelled the call.");
}

function leaseReleased(): GovernanceError {
  return new GovernanceError("CANCELLED", "The rate-limit lease was released before its retry could start.");
}

const ignore = () => {};

/**
 * One rate-limit group of one replica, its state in PostgreSQL. The replica keeps its callers in a
 * local FIFO and one pump per group talks to the database, one statement at a time, so the order in
 * which this replica's callers reach the database is their arrival order; across replicas the
 * waiter rows' ids give one FIFO. The pump sleeps until the pacing is due, or until a release is
 * announced (`wake`), or at most `pollIntervalMs` (a lost announcement only delays).
 */
export class PostgresRateLimitGroup {
  readonly #name: string;
  readonly #limits: ResolvedRateLimit;
  readonly #ctx: SharedGroupContext;
  readonly #waiters = new Set<Waiter>();
  readonly #changed = new Set<() => void>();
  #pumping = false;
  #dirty = false;
  #nap: AbortController | undefined;
  /**
   * No cap and no pacing: a lease row would count nothing, so a caller admitted while the group is clear
   * (no cooldown, nobody queued) gets a lease without a row, and its release costs no statement.
   */
  readonly #rowless: boolean;
  /** Local time before which the registered head need not ask again (pacing it was told). */
  #headDueAt = 0;
  #closed = false;

  constructor(name: string, limits: ResolvedRateLimit, ctx: SharedGroupContext) {
    this.#name = name;
    this.#limits = limits;
    this.#ctx = ctx;
    this.#rowless = !Number.isFinite(limits.maxConcurrent) && limits.intervalMs === 0;
  }

  /** How many of this replica's callers wait. */
  get queued(): number {
    return this.#waiters.size;
  }

  acquire(signal?: AbortSignal): Promise<RateLimitLease> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#closed) return Promise.reject(closedError());
    const { clock } = this.#ctx;
    return new Promise<RateLimitLease>((resolve, reject) => {
      let stopTimer = ignore;
      const settle =
        <T>(outcome: (value: T) => void) =>
        (value: T) => {
          stopTimer();
          signal?.removeEventListener("abort", onAbort);
          outcome(value);
        };
      const waiter: Waiter = {
        enqueuedAt: clock.now(),
        rowId: undefined,
        left: false,
        admit: settle(resolve),
        fail: settle(reject),
      };
      const onAbort = () => this.#leave(waiter, abortReason(signal!));
      signal?.addEventListener("abort", onAbort, { once: true });
      const timeoutMs = this.#limits.queueTimeoutMs;
      if (timeoutMs !== undefined) {
        const onTimeout = () =>
          this.#leave(
            waiter,
            new GovernanceError(
              "RATE_LIMIT_QUEUE_TIMEOUT",
              `Waited ${timeoutMs} ms in rate-limit group '${this.#name}' without being admitted.`,
              { retryable: true, data: { group: this.#name, queueTimeoutMs: timeoutMs } },
            ),
          );
        stopTimer = startTimer(clock, timeoutMs, onTimeout);
      }
      this.#waiters.add(waiter);
      this.wake();
    });
  }

  /** Something changed in the group (a release, a departure, a cooldown): look again now. */
  wake(): void {
    this.#dirty = true;
    this.#nap?.abort();
    for (const listener of this.#changed) listener();
    if (!this.#pumping && this.#waiters.size > 0) void this.#pump();
  }

  /** Refuses every local waiter; later calls are refused too. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) this.#leave(waiter, closedError());
    this.wake();
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (this.#waiters.size > 0) {
        this.#dirty = false;
        const waitMs = await this.#step();
        if (waitMs > 0 && !this.#dirty && this.#waiters.size > 0) {
          this.#nap = new AbortController();
          await this.#ctx.clock.sleep(waitMs, this.#nap.signal).catch(ignore);
          this.#nap = undefined;
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** One look at the database for the head, then queue rows for the callers behind it. */
  async #step(): Promise<number> {
    const head = this.#waiters.values().next().value as Waiter;
    const now = this.#ctx.clock.now();
    let waitMs: number;
    if (head.rowId !== undefined && now < this.#headDueAt) {
      waitMs = this.#headDueAt - now;
    } else {
      const decision = await this.#decide(head);
      if (!decision) return 0;
      if (!isBlocked(decision.outcome)) return 0;
      if (decision.outcome === "paced") {
        waitMs = Math.max(1, decision.wait_ms ?? 0);
        this.#headDueAt = now + waitMs;
      } else {
        // Blocked by others: a release announcement wakes it; else it looks again after a poll, or
        // when the first lease would expire if its replica has died, whichever comes first.
        waitMs = Math.max(
          1,
          Math.min(this.#ctx.pollIntervalMs, decision.wait_ms ?? Number.POSITIVE_INFINITY),
        );
        this.#headDueAt = 0;
      }
    }
    for (const waiter of [...this.#waiters]) {
      if (waiter === head || waiter.rowId !== undefined || waiter.left) continue;
      if (!(await this.#decide(waiter))) return 0;
    }
    return waitMs;
  }

  /**
   * Asks the database about one waiter and acts on the answer.
   * @returns the decision, or undefined when the database could not be reached (every waiter failed)
   */
  async #decide(waiter: Waiter): Promise<Decision | undefined> {
    const { db } = this.#ctx;
    const limits = this.#limits;
    let decision: Decision;
    try {
      decision =
        this.#rowless && waiter.rowId === undefined && (await this.#isClear())
          ? ROWLESS
          : await this.#admit(waiter);
    } catch (error) {
      const failure = unavailable(this.#name, db.label, error);
      for (const w of [...this.#waiters]) this.#leave(w, failure);
      return undefined;
    }
    const { outcome, id } = decision;
    if (outcome === "admitted") {
      const lease = this.#lease(id, this.#ctx.clock.now() - waiter.enqueuedAt);
      if (waiter.rowId !== undefined) this.#ctx.untrack("waiter", waiter.rowId);
      waiter.rowId = undefined;
      if (waiter.left) lease.release();
      else {
        this.#waiters.delete(waiter);
        waiter.admit(lease);
      }
    } else if (outcome === "queue_full") {
      const { maxQueueDepth } = limits;
      this.#leave(
        waiter,
        new GovernanceError(
          "RATE_LIMIT_QUEUE_FULL",
          `Rate-limit group '${this.#name}' has ${id} waiting calls across replicas (maxQueueDepth ${maxQueueDepth}).`,
          { retryable: true, data: { group: this.#name, maxQueueDepth } },
        ),
      );
    } else if (isBlocked(outcome) && waiter.rowId === undefined) {
      // A newcomer that cannot start now: the database queued it (`id` is its row).
      waiter.rowId = id!;
      this.#ctx.track("waiter", id!);
      // Left while its row was being written: take the row back out.
      if (waiter.left) this.#dropRow(waiter);
    } else if (outcome === "gone") {
      // Its row expired (the heartbeat could not reach the database): queue it again, at the back.
      this.#ctx.untrack("waiter", waiter.rowId!);
      waiter.rowId = undefined;
    }
    return decision;
  }

  /**
   * Whether nothing holds the group back: no cooldown and nobody queued, as the database sees it now.
   * A read (no lock, no write, no commit to wait for); a cooldown or a queue another replica committed
   * is seen as the full admission sees it, and then the caller takes the full admission (and queues).
   */
  async #isClear(): Promise<boolean> {
    const [row] = await this.#ctx.db.query<{ clear: boolean }>(CLEAR_SQL, [this.#name]);
    return row?.clear === true;
  }

  /** The full admission: one statement that locks the group's row and admits, queues or refuses. */
  async #admit(waiter: Waiter): Promise<Decision> {
    const { db, replica, leaseTtlMs } = this.#ctx;
    const limits = this.#limits;
    const [decision] = await db.query<Decision>(
      "SELECT outcome, id::TEXT AS id, wait_ms FROM sciencegate_rate_limit_admit($1, $2, $3, $4, $5, $6, $7)",
      [
        this.#name,
        replica,
        waiter.rowId ?? null,
        Number.isFinite(limits.maxConcurrent) ? limits.maxConcurrent : null,
        limits.intervalMs,
        Number.isFinite(limits.maxQueueDepth) ? limits.maxQueueDepth : null,
        leaseTtlMs,
      ],
    );
    return decision as Decision;
  }

  #leave(waiter: Waiter, reason: unknown): void {
    if (waiter.left) return;
    waiter.left = true;
    this.#waiters.delete(waiter);
    this.#dropRow(waiter);
    waiter.fail(reason);
  }

  #dropRow(waiter: Waiter): void {
    const rowId = waiter.rowId;
    if (rowId === undefined) return;
    waiter.rowId = undefined;
    this.#ctx.untrack("waiter", rowId);
    // A row that cannot be deleted expires after the lease TTL, since the heartbeat no longer renews it.
    this.#ctx.db.query(LEAVE_SQL, [rowId]).then(() => this.wake(), ignore);
  }

  /** A lease on row `id`, or (`null`) one without a row: nothing to renew, nothing to delete. */
  #lease(id: string | null, queueWaitMs: number): RateLimitLease {
    const { db } = this.#ctx;
    if (id !== null) this.#ctx.track("lease", id);
    // Made by the first retry turn only: most leases are released without one.
    let released: AbortController | undefined;
    let isReleased = false;
    let cooldown: Promise<unknown> = Promise.resolve();
    return {
      queueWaitMs,
      release: () => {
        if (isReleased) return;
        isReleased = true;
        released?.abort(leaseReleased());
        if (id === null) return;
        this.#ctx.untrack("lease", id);
        // Not deleted (database unreachable): the row expires after the lease TTL.
        db.query(RELEASE_SQL, [id]).then(() => this.wake(), ignore);
      },
      noteRateLimited: (retryAfter) => {
        const ms = parseRetryAfterMs(retryAfter, this.#ctx.clock.now()) ?? null;
        cooldown = db
          .query("SELECT sciencegate_rate_limit_cooldown($1, $2, $3, $4)", [
            this.#name,
            ms,
            DEFAULT_COOLDOWN_MS,
            this.#limits.intervalMs,
          ])
          .catch(ignore);
      },
      waitForTurn: async (signal) => {
        if (isReleased) throw leaseReleased();
        released ??= new AbortController();
        await cooldown;
        await this.#waitForTurn(released.signal, signal);
      },
    };
  }

  /** Waits for pacing and cooldown before a retry; retry turns go before new admissions. */
  async #waitForTurn(released: AbortSignal, signal: AbortSignal | undefined): Promise<void> {
    const { db, clock, replica, leaseTtlMs, pollIntervalMs } = this.#ctx;
    const stop = signal ? AbortSignal.any([released, signal]) : released;
    let turnId: string | null = null;
    try {
      for (;;) {
        if (stop.aborted) throw stop.reason ?? abortReason(stop);
        let decision: Decision;
        try {
          [decision] = (await db.query<Decision>(
            "SELECT outcome, id::TEXT AS id, wait_ms FROM sciencegate_rate_limit_turn($1, $2, $3, $4, $5)",
            [this.#name, replica, turnId, this.#limits.intervalMs, leaseTtlMs],
          )) as [Decision];
        } catch (error) {
          throw unavailable(this.#name, db.label, error);
        }
        if (decision.outcome === "started") {
          if (turnId !== null) this.#ctx.untrack("waiter", turnId);
          turnId = null;
          return;
        }
        if (turnId !== decision.id) {
          if (turnId !== null) this.#ctx.untrack("waiter", turnId);
          turnId = decision.id;
          this.#ctx.track("waiter", turnId!);
        }
        const nap = new AbortController();
        const onChange = () => nap.abort();
        const wait = decision.wait_ms === null ? pollIntervalMs : Math.max(1, decision.wait_ms);
        if (decision.wait_ms === null) this.#changed.add(onChange);
        await clock.sleep(wait, AbortSignal.any([nap.signal, stop])).catch(ignore);
        this.#changed.delete(onChange);
      }
    } finally {
      if (turnId !== null) {
        this.#ctx.untrack("waiter", turnId);
        db.query(LEAVE_SQL, [turnId]).then(() => this.wake(), ignore);
      }
    }
  }
}

/** What a clear look at a group without cap or pacing decides: admitted, with no lease row. */
const ROWLESS: Decision = Object.freeze({ outcome: "admitted", id: null, wait_ms: 0 });

function isBlocked(outcome: Outcome): boolean {
  return outcome === "behind" || outcome === "full" || outcome === "paced";
}

function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.timer) return clock.timer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, ignore);
  return () => controller.abort();
}

function closedError(): GovernanceError {
  return new GovernanceError("CANCELLED", "The rate limiter is closed; the call was not sent.");
}

/**
 * The fail-closed answer when the shared state cannot be reached: nothing is sent upstream.
 * @param group the group name
 * @param label the database's masked URL
 * @param cause what the driver threw
 */
export function unavailable(group: string, label: string, cause: unknown): GovernanceError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new GovernanceError(
    "UPSTREAM_UNAVAILABLE",
    `Rate-limit group '${group}' keeps its shared state in PostgreSQL ${label}, which cannot be reached (${reason}); the call was not sent. Retry later, or check the database.`,
    { retryable: true, data: { group, database: label }, cause },
  );
}
