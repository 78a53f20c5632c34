/**
 * The semantics every rate limiter the broker can use must share (`RateLimitAdmission`), on real
 * time with short intervals: the in-process `RateLimiter` and `PostgresRateLimiter` both run it.
 * Pacing, timeouts and cooldowns are measured on real time (PostgreSQL's clock decides them there);
 * everything else waits on the limiter's own state (`stats`), polled, never on a fixed sleep.
 */
import { describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import type {
  RateLimitAdmission,
  RateLimitGroupConfig,
  RateLimitLease,
  RateLimitStats,
} from "../../../src/governance/rate-limit/index.js";

/** A limiter under test: admission, and a snapshot of a group (across replicas where it has them). */
export type LimiterUnderTest = RateLimitAdmission & {
  stats(group: string): RateLimitStats | Promise<RateLimitStats>;
};

/** Opens a limiter with these groups; `close` ends it. */
export type OpenLimiter = (
  groups: Record<string, RateLimitGroupConfig>,
) => Promise<{ limiter: LimiterUnderTest; close(): Promise<void> }>;

interface Observed {
  status: "pending" | "fulfilled" | "rejected";
  lease?: RateLimitLease;
  error?: unknown;
  settledAt?: number;
}

function observe(promise: Promise<RateLimitLease>): Observed {
  const state: Observed = { status: "pending" };
  promise.then(
    (lease) => Object.assign(state, { status: "fulfilled", lease, settledAt: performance.now() }),
    (error: unknown) => Object.assign(state, { status: "rejected", error, settledAt: performance.now() }),
  );
  return state;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds (polled every 5 ms), or fails after `ms`. */
export async function until(done: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await done())) {
    if (performance.now() > end) throw new Error("condition not reached in time");
    await sleep(5);
  }
}

/**
 * Fails as soon as `holds()` stops holding during the next `ms`: the one kind of wait here that is a
 * time window by meaning (something must NOT happen), not a wait for a condition.
 */
async function stillAfter(ms: number, holds: () => boolean): Promise<void> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    expect(holds()).toBe(true);
    await sleep(5);
  }
  expect(holds()).toBe(true);
}

const codeOf = (o: Observed) => (isGovernanceError(o.error) ? o.error.code : undefined);

/**
 * Registers the shared scenarios.
 * @param name the implementation's name
 * @param open opens a limiter on fresh state
 */
export function describeRateLimitConformance(name: string, open: OpenLimiter): void {
  const setup = async (config: RateLimitGroupConfig) => {
    const { limiter, close } = await open({ g: config });
    const acquire = (signal?: AbortSignal) => observe(limiter.acquire("g", signal ? { signal } : {}));
    /** Waits until the group shows exactly these counts. */
    const counts = (active: number, queued: number) =>
      until(async () => {
        const stats = await limiter.stats("g");
        return stats.active === active && stats.queued === queued;
      });
    return { limiter, close, acquire, counts };
  };

  describe(`${name}: rate-limit conformance`, () => {
    test("maxConcurrentRequests caps active leases; a release admits the next waiter", async () => {
      const { acquire, close, counts } = await setup({ maxConcurrentRequests: 2 });
      try {
        const calls = [acquire(), acquire(), acquire()];
        await until(() => calls[1]!.status === "fulfilled");
        // All three reached the limiter: two hold a slot, the third waits in its queue.
        await counts(2, 1);
        expect(calls.map((c) => c.status)).toEqual(["fulfilled", "fulfilled", "pending"]);
        calls[0]!.lease!.release();
        await until(() => calls[2]!.status !== "pending");
        expect(calls[2]!.status).toBe("fulfilled");
        for (const c of calls.slice(1)) c.lease!.release();
      } finally {
        await close();
      }
    });

    test("pacing spaces starts by the interval; queueWaitMs grows with the place in line", async () => {
      const { acquire, close } = await setup({ rateLimitPerSecond: 10 });
      try {
        const calls = [acquire(), acquire(), acquire()];
        await until(() => calls.every((c) => c.status === "fulfilled"));
        const at = calls.map((c) => c.settledAt!);
        // Admission is exact; when the caller hears of it depends on its event loop and, on PostgreSQL,
        // on a round trip per admission (tens of ms on a loaded machine). Unpaced starts would be a few
        // ms apart, so a gap of more than half the interval still tells pacing from none.
        expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(60);
        expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(60);
        expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(200 - 30);
        const waits = calls.map((c) => c.lease!.queueWaitMs);
        // The first is not paced: it waits less than one interval (a database round trip on a loaded
        // machine can take tens of ms by itself).
        expect(waits[0]).toBeLessThan(100);
        expect(waits[2]!).toBeGreaterThanOrEqual(200 - 15);
        for (const c of calls) c.lease!.release();
      } finally {
        await close();
      }
    });

    test("strict FIFO: waiters start in arrival order and a newcomer never overtakes", async () => {
      const { acquire, close, counts } = await setup({ maxConcurrentRequests: 1 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const waiters = Array.from({ length: 5 }, () => acquire());
        await counts(1, 5);
        first.lease!.release();
        const newcomer = acquire();
        const order: number[] = [];
        for (let k = 0; k < waiters.length; k++) {
          await until(() => waiters.some((w, i) => w.status === "fulfilled" && !order.includes(i)));
          const i = waiters.findIndex((w, j) => w.status === "fulfilled" && !order.includes(j));
          order.push(i);
          expect(newcomer.status).toBe("pending");
          waiters[i]!.lease!.release();
        }
        expect(order).toEqual([0, 1, 2, 3, 4]);
        await until(() => newcomer.status === "fulfilled");
        newcomer.lease!.release();
      } finally {
        await close();
      }
    });

    test("maxQueueDepth 0 refuses at once whoever cannot start; a retryable RATE_LIMIT_QUEUE_FULL", async () => {
      const { acquire, close } = await setup({ maxConcurrentRequests: 1, maxQueueDepth: 0 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const second = acquire();
        await until(() => second.status !== "pending");
        expect(codeOf(second)).toBe("RATE_LIMIT_QUEUE_FULL");
        expect(isGovernanceError(second.error) && second.error.retryable).toBe(true);
        first.lease!.release();
      } finally {
        await close();
      }
    });

    test("maxQueueDepth N lets N wait and refuses the next", async () => {
      const { acquire, close } = await setup({ maxConcurrentRequests: 1, maxQueueDepth: 2 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const [a, b, c] = [acquire(), acquire(), acquire()];
        await until(() => c!.status !== "pending");
        expect(codeOf(c!)).toBe("RATE_LIMIT_QUEUE_FULL");
        expect([a!.status, b!.status]).toEqual(["pending", "pending"]);
        first.lease!.release();
        await until(() => a!.status === "fulfilled");
        a!.lease!.release();
        await until(() => b!.status === "fulfilled");
        b!.lease!.release();
      } finally {
        await close();
      }
    });

    test("queueTimeoutMs refuses a waiter not admitted in time (retryable); the next moves up", async () => {
      // Long enough for the later waiter to be seen queued and admitted on a loaded machine.
      const { acquire, close, counts } = await setup({ maxConcurrentRequests: 1, queueTimeoutMs: 500 });
      try {
        const started = performance.now();
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const early = acquire();
        await until(() => early.status !== "pending");
        expect(codeOf(early)).toBe("RATE_LIMIT_QUEUE_TIMEOUT");
        expect(isGovernanceError(early.error) && early.error.retryable).toBe(true);
        expect(early.settledAt! - started).toBeGreaterThanOrEqual(500 - 5);
        const later = acquire();
        await counts(1, 1);
        first.lease!.release();
        await until(() => later.status !== "pending");
        expect(later.status).toBe("fulfilled");
        later.lease!.release();
      } finally {
        await close();
      }
    });

    test("abort removes a waiter with the signal's reason; the next is admitted", async () => {
      const { acquire, close, counts } = await setup({ maxConcurrentRequests: 1 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const controller = new AbortController();
        const aborted = acquire(controller.signal);
        const next = acquire();
        await counts(1, 2);
        const reason = new Error("user pressed stop");
        controller.abort(reason);
        await until(() => aborted.status !== "pending");
        expect(aborted.error).toBe(reason);
        first.lease!.release();
        await until(() => next.status === "fulfilled");
        next.lease!.release();
      } finally {
        await close();
      }
    });

    test("a second release() frees no second slot", async () => {
      const { acquire, close, counts } = await setup({ maxConcurrentRequests: 1 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const [a, b] = [acquire(), acquire()];
        await counts(1, 2);
        first.lease!.release();
        first.lease!.release();
        await until(() => a.status === "fulfilled");
        await counts(1, 1);
        await stillAfter(150, () => b.status === "pending");
        a.lease!.release();
        await until(() => b.status === "fulfilled");
        b.lease!.release();
      } finally {
        await close();
      }
    });

    test("omitted dimensions are unlimited: 30 immediate admissions", async () => {
      const { acquire, close, limiter } = await setup({});
      try {
        const calls = Array.from({ length: 30 }, () => acquire());
        await until(() => calls.every((c) => c.status === "fulfilled"));
        // Nobody waited for anybody: all 30 were admitted at once, none queued. (Not a bound on
        // queueWaitMs: a database round trip on a loaded machine can take a second by itself.) Only a
        // capped or paced group counts its leases in PostgreSQL, so `active` is 30 or 0.
        const { active, queued } = await limiter.stats("g");
        expect(queued).toBe(0);
        expect([30, 0]).toContain(active);
        for (const c of calls) c.lease!.release();
      } finally {
        await close();
      }
    });

    test("a 429 with Retry-After pauses the group; waitForTurn waits it out keeping the slot", async () => {
      const { acquire, close, limiter } = await setup({ maxConcurrentRequests: 1 });
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        const noted = performance.now();
        first.lease!.noteRateLimited(0.3);
        await first.lease!.waitForTurn();
        expect(performance.now() - noted).toBeGreaterThanOrEqual(300 - 15);
        const paused = performance.now();
        first.lease!.noteRateLimited("0.3");
        first.lease!.release();
        // The pause and the release are recorded (in the database, for PostgreSQL) before the next
        // caller comes; a look that came after the pause's end needs no more waiting.
        await until(async () => {
          const stats = await limiter.stats("g");
          return (
            stats.active === 0 && (stats.cooldownUntil !== undefined || performance.now() - paused >= 300)
          );
        });
        const next = acquire();
        await until(() => next.status === "fulfilled");
        expect(next.settledAt! - paused).toBeGreaterThanOrEqual(250);
        next.lease!.release();
      } finally {
        await close();
      }
    });

    test("waitForTurn on a released lease is CANCELLED", async () => {
      const { acquire, close } = await setup({});
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        first.lease!.release();
        const error = await first.lease!.waitForTurn().catch((e: unknown) => e);
        expect(isGovernanceError(error) && error.code).toBe("CANCELLED");
      } finally {
        await close();
      }
    });

    test("a lease released while its retry turn waits out a cooldown ends the wait with CANCELLED", async () => {
      const { acquire, close } = await setup({});
      try {
        const first = acquire();
        await until(() => first.status === "fulfilled");
        first.lease!.noteRateLimited(30);
        const waited = first.lease!.waitForTurn().then(
          () => "started",
          (e: unknown) => e,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        const released = performance.now();
        first.lease!.release();
        const error = await waited;
        expect(isGovernanceError(error) && error.code).toBe("CANCELLED");
        // Ended by the release, not by the 30 s cooldown.
        expect(performance.now() - released).toBeLessThan(5_000);
      } finally {
        await close();
      }
    });
  });
}
