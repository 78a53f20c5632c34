import { describe, expect, test } from "vitest";
import { parseRetryAfterMs } from "../../../src/contract/retry-after.js";
import { GovernanceError, isGovernanceError } from "../../../src/core/errors.js";
import {
  RateLimiter,
  type RateLimitGroupConfig,
  type RateLimitLease,
} from "../../../src/governance/rate-limit/index.js";
import { flushMicrotasks, ManualClock } from "../../../src/testing/manual-clock.js";

interface Observed<T> {
  status: "pending" | "fulfilled" | "rejected";
  value?: T;
  error?: unknown;
  settledAt?: number;
}

/** Records how and when a promise settles, without awaiting it. */
function observe<T>(promise: Promise<T>, clock: ManualClock): Observed<T> {
  const state: Observed<T> = { status: "pending" };
  promise.then(
    (value) => Object.assign(state, { status: "fulfilled", value, settledAt: clock.now() }),
    (error: unknown) => Object.assign(state, { status: "rejected", error, settledAt: clock.now() }),
  );
  return state;
}

function setup(config: RateLimitGroupConfig, start = 0) {
  const clock = new ManualClock(start);
  const limiter = new RateLimiter({ groups: new Map([["g", config]]), clock });
  const acquire = (signal?: AbortSignal) =>
    observe(limiter.acquire("g", signal === undefined ? {} : { signal }), clock);
  return { clock, limiter, acquire };
}

function leaseOf(observed: Observed<RateLimitLease>): RateLimitLease {
  expect(observed.status).toBe("fulfilled");
  return observed.value!;
}

function errorCode(observed: Observed<unknown>): string | undefined {
  expect(observed.status).toBe("rejected");
  return isGovernanceError(observed.error) ? observed.error.code : undefined;
}

describe("RateLimiter admission", () => {
  test("maxConcurrentRequests caps active leases; a release admits the next waiter", async () => {
    const { limiter, acquire } = setup({ maxConcurrentRequests: 2 });
    const calls = [acquire(), acquire(), acquire()];
    await flushMicrotasks();
    expect(calls.map((c) => c.status)).toEqual(["fulfilled", "fulfilled", "pending"]);
    expect(limiter.stats("g")).toEqual({ active: 2, queued: 1 });

    leaseOf(calls[0]!).release();
    await flushMicrotasks();
    expect(calls[2]!.status).toBe("fulfilled");
    expect(limiter.stats("g")).toEqual({ active: 2, queued: 0 });
  });

  test.each([
    { name: "minIntervalMs", config: { minIntervalMs: 100 }, spacing: 100 },
    { name: "rateLimitPerSecond", config: { rateLimitPerSecond: 4 }, spacing: 250 },
    { name: "both, rate is larger", config: { minIntervalMs: 100, rateLimitPerSecond: 4 }, spacing: 250 },
    { name: "both, interval is larger", config: { minIntervalMs: 500, rateLimitPerSecond: 4 }, spacing: 500 },
  ])("pacing via $name spaces starts by $spacing ms", async ({ config, spacing }) => {
    const { clock, acquire } = setup(config);
    const calls = [acquire(), acquire(), acquire()];
    await clock.advance(spacing - 1);
    expect(calls.map((c) => c.status)).toEqual(["fulfilled", "pending", "pending"]);
    await clock.advance(1);
    expect(calls[1]!.status).toBe("fulfilled");
    await clock.advance(spacing);
    expect(calls.map((c) => c.settledAt)).toEqual([0, spacing, 2 * spacing]);
    expect(calls.map((c) => leaseOf(c).queueWaitMs)).toEqual([0, spacing, 2 * spacing]);
    expect(clock.pendingTimers).toBe(0);
  });

  test("pacing counts from the last start, so an idle group admits at once", async () => {
    const { clock, acquire } = setup({ minIntervalMs: 100 });
    acquire();
    await clock.advance(300);
    const late = acquire();
    await flushMicrotasks();
    expect(late.status).toBe("fulfilled");
    expect(leaseOf(late).queueWaitMs).toBe(0);
  });

  test("strict FIFO: waiters start in arrival order and a newcomer never overtakes", async () => {
    const { clock, limiter } = setup({ maxConcurrentRequests: 1 });
    const order: string[] = [];
    const named = (name: string) =>
      observe(
        limiter.acquire("g").then((lease) => {
          order.push(name);
          return lease;
        }),
        clock,
      );
    const first = named("first");
    const [a, b, c] = [named("a"), named("b"), named("c")];
    await flushMicrotasks();

    leaseOf(first).release();
    const newcomer = named("newcomer"); // arrives in the same tick as the freed slot
    await flushMicrotasks();
    expect(newcomer.status).toBe("pending");
    for (const waiter of [a, b, c]) {
      leaseOf(waiter).release();
      await flushMicrotasks();
    }
    expect(order).toEqual(["first", "a", "b", "c", "newcomer"]);
  });

  test("strict FIFO under pacing: a newcomer at the due time waits behind the queue", async () => {
    const { clock, acquire } = setup({ minIntervalMs: 100 });
    acquire();
    const queued = acquire();
    await clock.advance(100);
    const newcomer = acquire();
    await flushMicrotasks();
    expect(queued.settledAt).toBe(100);
    expect(newcomer.status).toBe("pending");
    await clock.advance(100);
    expect(newcomer.settledAt).toBe(200);
  });

  test("strict FIFO holds when a timer fires late: a newcomer queues behind the due waiter", async () => {
    let now = 0;
    const lateClock = { now: () => now, sleep: () => new Promise<void>(() => {}) }; // timers never fire
    const limiter = new RateLimiter({ groups: { g: { minIntervalMs: 100 } }, clock: lateClock });
    const clock = new ManualClock();
    observe(limiter.acquire("g"), clock);
    const queued = observe(limiter.acquire("g"), clock);
    now = 250;
    const newcomer = observe(limiter.acquire("g"), clock);
    await flushMicrotasks();
    expect(queued.status).toBe("fulfilled");
    expect(newcomer.status).toBe("pending");
  });

  test("maxQueueDepth 0 refuses at once whoever cannot start immediately", async () => {
    const { acquire, limiter } = setup({ maxConcurrentRequests: 1, maxQueueDepth: 0 });
    const first = acquire();
    const second = acquire();
    await flushMicrotasks();
    expect(first.status).toBe("fulfilled");
    expect(errorCode(second)).toBe("RATE_LIMIT_QUEUE_FULL");
    expect((second.error as GovernanceError).retryable).toBe(true);
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 0 });
  });

  test("maxQueueDepth N lets N wait and refuses the next; a freed place can be taken again", async () => {
    const { acquire } = setup({ maxConcurrentRequests: 1, maxQueueDepth: 2 });
    const [first, a, b, c] = [acquire(), acquire(), acquire(), acquire()];
    await flushMicrotasks();
    expect([a!.status, b!.status]).toEqual(["pending", "pending"]);
    expect(errorCode(c!)).toBe("RATE_LIMIT_QUEUE_FULL");

    leaseOf(first!).release();
    const d = acquire();
    await flushMicrotasks();
    expect(a!.status).toBe("fulfilled");
    expect(d.status).toBe("pending");
  });

  test("queueTimeoutMs rejects a waiter that was not admitted in time, and the next moves up", async () => {
    const { clock, acquire, limiter } = setup({ maxConcurrentRequests: 1, queueTimeoutMs: 500 });
    const first = acquire();
    const early = acquire();
    await clock.advance(200);
    const later = acquire();
    await clock.advance(300);
    expect(errorCode(early)).toBe("RATE_LIMIT_QUEUE_TIMEOUT");
    expect((early.error as GovernanceError).retryable).toBe(true);
    expect(early.settledAt).toBe(500);
    expect(later.status).toBe("pending");
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 1 });

    await clock.advance(100);
    leaseOf(first).release();
    await flushMicrotasks();
    expect(leaseOf(later).queueWaitMs).toBe(400);
    expect(clock.pendingTimers).toBe(0); // the admitted waiter's timeout timer is gone
    await clock.advance(1000);
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 0 });
  });

  test("each waiter gets its full queueTimeoutMs from its own arrival", async () => {
    const { clock, acquire, limiter } = setup({ maxConcurrentRequests: 1, queueTimeoutMs: 500 });
    acquire();
    const early = acquire();
    await clock.advance(200);
    const later = acquire();
    await clock.advance(300);
    expect(early.settledAt).toBe(500);
    await clock.advance(199);
    expect(later.status).toBe("pending");
    await clock.advance(1);
    expect(errorCode(later)).toBe("RATE_LIMIT_QUEUE_TIMEOUT");
    expect(later.settledAt).toBe(700);
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  test("abort removes a waiter and rejects with the signal's reason", async () => {
    const { clock, acquire, limiter } = setup({ maxConcurrentRequests: 1, queueTimeoutMs: 1000 });
    const first = acquire();
    const controller = new AbortController();
    const aborted = acquire(controller.signal);
    const next = acquire();
    await flushMicrotasks();
    const reason = new Error("user pressed stop");
    controller.abort(reason);
    await flushMicrotasks();
    expect(aborted.status).toBe("rejected");
    expect(aborted.error).toBe(reason);
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 1 });
    expect(clock.pendingTimers).toBe(1); // only the remaining waiter's timeout

    leaseOf(first).release();
    await flushMicrotasks();
    expect(next.status).toBe("fulfilled");
  });

  test("an already aborted signal is refused without taking a slot", async () => {
    const { acquire, limiter } = setup({});
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    const call = acquire(controller.signal);
    await flushMicrotasks();
    expect((call.error as Error).message).toBe("gone");
    expect(limiter.stats("g")).toEqual({ active: 0, queued: 0 });
  });

  test("a second release() frees no second slot", async () => {
    const { acquire, limiter } = setup({ maxConcurrentRequests: 1 });
    const first = acquire();
    const [a, b] = [acquire(), acquire()];
    await flushMicrotasks();
    leaseOf(first).release();
    leaseOf(first).release();
    await flushMicrotasks();
    expect([a.status, b.status]).toEqual(["fulfilled", "pending"]);
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 1 });
  });

  test("omitted dimensions are unlimited: 100 immediate admissions", async () => {
    const { clock, acquire, limiter } = setup({});
    const calls = Array.from({ length: 100 }, () => acquire());
    await flushMicrotasks();
    expect(calls.every((c) => c.status === "fulfilled" && c.value!.queueWaitMs === 0)).toBe(true);
    expect(limiter.stats("g")).toEqual({ active: 100, queued: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  test("an unknown group is unlimited even when other groups are strict", async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({
      groups: { strict: { maxConcurrentRequests: 1, minIntervalMs: 1000, maxQueueDepth: 0 } },
      clock,
    });
    const calls = Array.from({ length: 100 }, () => observe(limiter.acquire("elsewhere"), clock));
    await flushMicrotasks();
    expect(calls.every((c) => c.status === "fulfilled")).toBe(true);
    expect(limiter.stats("elsewhere").active).toBe(100);
    expect(limiter.stats("never-used")).toEqual({ active: 0, queued: 0 });
  });

  test.each([
    { field: "maxConcurrentRequests", value: 0 },
    { field: "maxConcurrentRequests", value: 1.5 },
    { field: "minIntervalMs", value: -1 },
    { field: "rateLimitPerSecond", value: 0 },
    { field: "maxQueueDepth", value: -1 },
    { field: "queueTimeoutMs", value: Number.NaN },
  ])("an out-of-range $field ($value) is INVALID_CONFIG naming the field", ({ field, value }) => {
    const construct = () => new RateLimiter({ groups: { ncbi: { [field]: value } } });
    expect(construct).toThrow(GovernanceError);
    expect(construct).toThrow(new RegExp(`'ncbi': ${field}`));
  });
});

describe("RateLimiter 429 cooldown", () => {
  test.each([
    { retryAfter: 2, cooldown: 2000 },
    { retryAfter: "2", cooldown: 2000 },
    { retryAfter: " 1.5 ", cooldown: 1500 },
    { retryAfter: "0", cooldown: 0 },
  ])("Retry-After seconds $retryAfter holds the group for $cooldown ms", async ({ retryAfter, cooldown }) => {
    const { clock, acquire, limiter } = setup({});
    await clock.advance(1000);
    const first = acquire();
    await flushMicrotasks();
    leaseOf(first).noteRateLimited(retryAfter);
    const waiting = acquire();
    await flushMicrotasks();
    if (cooldown > 0) {
      expect(limiter.stats("g").cooldownUntil).toBe(1000 + cooldown);
      await clock.advance(cooldown - 1);
      expect(waiting.status).toBe("pending");
      await clock.advance(1);
    }
    expect(leaseOf(waiting).queueWaitMs).toBe(cooldown);
    expect(limiter.stats("g").cooldownUntil).toBeUndefined();
  });

  test("Retry-After as an HTTP-date is measured from the clock's now", async () => {
    const { clock, acquire, limiter } = setup({}, Date.UTC(2025, 0, 1, 0, 0, 0));
    const first = acquire();
    await flushMicrotasks();
    leaseOf(first).noteRateLimited("Wed, 01 Jan 2025 00:00:05 GMT");
    expect(limiter.stats("g").cooldownUntil).toBe(clock.now() + 5000);
    const waiting = acquire();
    await clock.advance(4999);
    expect(waiting.status).toBe("pending");
    await clock.advance(1);
    expect(leaseOf(waiting).queueWaitMs).toBe(5000);
  });

  test.each([
    { retryAfter: undefined, config: {}, expected: 1000 },
    { retryAfter: null, config: {}, expected: 1000 },
    { retryAfter: "soon", config: {}, expected: 1000 },
    { retryAfter: -3, config: {}, expected: 1000 },
    { retryAfter: undefined, config: { minIntervalMs: 300 }, expected: 1000 },
    { retryAfter: undefined, config: { minIntervalMs: 3000 }, expected: 2500 }, // pacing still pending
  ])("absent or unparseable Retry-After ($retryAfter, $config) cools down $expected ms", async (row) => {
    const { clock, acquire, limiter } = setup(row.config);
    const first = acquire();
    await clock.advance(500);
    leaseOf(first).noteRateLimited(row.retryAfter);
    expect(limiter.stats("g").cooldownUntil).toBe(500 + row.expected);
  });

  test("a later, shorter cooldown does not shorten a running one", async () => {
    const { acquire, limiter } = setup({});
    const first = acquire();
    await flushMicrotasks();
    leaseOf(first).noteRateLimited(10);
    leaseOf(first).noteRateLimited(1);
    expect(limiter.stats("g").cooldownUntil).toBe(10_000);
  });

  test("waitForTurn waits out the cooldown while keeping the slot; waiters stay queued", async () => {
    const { clock, acquire, limiter } = setup({ maxConcurrentRequests: 1 });
    const first = acquire();
    await flushMicrotasks();
    const lease = leaseOf(first);
    lease.noteRateLimited("3");
    const queued = acquire();
    const turn = observe(lease.waitForTurn(), clock);
    await clock.advance(2999);
    expect(turn.status).toBe("pending");
    await clock.advance(1);
    expect(turn.settledAt).toBe(3000);
    expect(queued.status).toBe("pending");
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 1 });

    lease.release();
    await flushMicrotasks();
    expect(leaseOf(queued).queueWaitMs).toBe(3000);
  });

  test("a retry counts as a start for pacing and goes before queued newcomers", async () => {
    const { clock, acquire } = setup({ minIntervalMs: 1000 });
    const first = acquire();
    const queued = acquire();
    await flushMicrotasks();
    const turn = observe(leaseOf(first).waitForTurn(), clock);
    await clock.advance(1000);
    expect(turn.settledAt).toBe(1000);
    expect(queued.status).toBe("pending");
    await clock.advance(1000);
    expect(queued.settledAt).toBe(2000);
  });

  test("an immediate retry also counts as a start: the next admission is paced from it", async () => {
    const { clock, acquire } = setup({ minIntervalMs: 1000 });
    const first = acquire();
    await clock.advance(1000);
    const turn = observe(leaseOf(first).waitForTurn(), clock);
    const next = acquire();
    await flushMicrotasks();
    expect(turn.settledAt).toBe(1000);
    expect(next.status).toBe("pending");
    await clock.advance(1000);
    expect(next.settledAt).toBe(2000);
  });

  test("waitForTurn rejects on abort, and with CANCELLED once the lease is released", async () => {
    const { clock, acquire } = setup({ minIntervalMs: 1000 });
    const first = acquire();
    await flushMicrotasks();
    const lease = leaseOf(first);
    const controller = new AbortController();
    const aborted = observe(lease.waitForTurn(controller.signal), clock);
    const pending = observe(lease.waitForTurn(), clock);
    controller.abort(new Error("stop"));
    lease.release();
    await flushMicrotasks();
    expect((aborted.error as Error).message).toBe("stop");
    expect(errorCode(pending)).toBe("CANCELLED");
    const afterRelease = observe(lease.waitForTurn(), clock);
    await flushMicrotasks();
    expect(errorCode(afterRelease)).toBe("CANCELLED");
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.UTC(2015, 9, 21, 7, 27, 0);
  test.each([
    { value: "120", expected: 120_000 },
    { value: 0.25, expected: 250 },
    { value: "Wed, 21 Oct 2015 07:28:00 GMT", expected: 60_000 },
    { value: "Wednesday, 21-Oct-15 07:28:00 GMT", expected: 60_000 },
    { value: "Wed Oct 21 07:28:00 2015", expected: 60_000 },
    { value: "Wed Oct  7 07:28:00 2015", expected: 0 },
    { value: "Sat, 21 Oct 2015 07:28:00 GMT", expected: 60_000 }, // a wrong weekday is tolerated
    { value: "Wed, 21 Oct 2015 25:00:00 GMT", expected: undefined },
    { value: "Wed, 21 Oct 2015 07:00:00 GMT", expected: 0 },
    { value: "Sat, 31 Feb 2015 07:28:00 GMT", expected: undefined },
    { value: "soon 2030", expected: undefined },
    { value: "-1", expected: undefined },
    { value: "", expected: undefined },
    { value: Number.POSITIVE_INFINITY, expected: undefined },
  ])("$value -> $expected", ({ value, expected }) => {
    expect(parseRetryAfterMs(value, now)).toBe(expected);
  });
});

describe("RateLimiter at scale", () => {
  test("500 acquirers with maxConcurrentRequests 2 never exceed 2 active and all run in FIFO order", async () => {
    const { clock, limiter } = setup({ maxConcurrentRequests: 2 });
    const order: number[] = [];
    let active = 0;
    let maxActive = 0;
    const runs = Array.from({ length: 500 }, async (_, i) => {
      const lease = await limiter.acquire("g");
      order.push(i);
      active++;
      maxActive = Math.max(maxActive, active, limiter.stats("g").active);
      await clock.sleep(1 + (i % 3));
      active--;
      lease.release();
    });
    for (let step = 0; step < 5000 && !(order.length === 500 && active === 0); step++) {
      await clock.advance(1);
    }
    await Promise.all(runs);
    expect(order).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(maxActive).toBe(2);
    expect(limiter.stats("g")).toEqual({ active: 0, queued: 0 });
  });

  test("1,000 waiters with every third aborted: the rest are admitted in order", async () => {
    const { acquire, limiter } = setup({ maxConcurrentRequests: 1 });
    const first = acquire();
    const controllers = Array.from({ length: 1000 }, () => new AbortController());
    const waiters = controllers.map((c) => acquire(c.signal));
    controllers.forEach((c, i) => {
      if (i % 3 === 0) c.abort(new Error(`abort ${i}`));
    });
    await flushMicrotasks();
    expect(limiter.stats("g").queued).toBe(666);

    const expected = Array.from({ length: 1000 }, (_, i) => i).filter((i) => i % 3 !== 0);
    let current = first;
    for (const [k, index] of expected.entries()) {
      leaseOf(current).release();
      await flushMicrotasks();
      current = waiters[index]!;
      expect(current.status).toBe("fulfilled");
      expect(waiters[expected[k + 1] ?? 0]!.status).toBe(k + 1 < expected.length ? "pending" : "rejected");
    }
    expect(limiter.stats("g")).toEqual({ active: 1, queued: 0 });
  });
});

describe("RateLimiter: group names named after Object.prototype members", () => {
  test("a configured 'constructor' group is limited; an unconfigured 'toString' group is unlimited", async () => {
    const clock = new ManualClock(0);
    const groups = JSON.parse('{"constructor": {"maxConcurrentRequests": 1, "maxQueueDepth": 0}}') as Record<
      string,
      RateLimitGroupConfig
    >;
    const limiter = new RateLimiter({ groups, clock });
    expect(limiter.stats("toString")).toEqual({ active: 0, queued: 0 });
    const first = await limiter.acquire("constructor");
    await expect(limiter.acquire("constructor")).rejects.toMatchObject({ code: "RATE_LIMIT_QUEUE_FULL" });
    const open = await Promise.all([1, 2, 3].map(() => limiter.acquire("toString")));
    expect(limiter.stats("toString")).toMatchObject({ active: 3, queued: 0 });
    expect(limiter.stats("constructor")).toMatchObject({ active: 1, queued: 0 });
    for (const lease of [first, ...open]) lease.release();
  });
});
