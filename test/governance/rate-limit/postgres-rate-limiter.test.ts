import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  isGovernanceError,
  openPostgres,
  type PostgresDatabase,
  type SqlValue,
} from "../../../src/core/index.js";
import {
  PostgresRateLimiter,
  type PostgresRateLimiterOptions,
  type RateLimitLease,
} from "../../../src/governance/rate-limit/index.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { openTestPostgres, type TestPostgres } from "../../postgres/test-postgres.js";
import { describeRateLimitConformance, until } from "./rate-limit-conformance.js";

let server: TestPostgres;
const opened: { close(): Promise<void> }[] = [];
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(async () => {
  for (const item of opened.reverse()) await item.close().catch(() => {});
  await server?.stop();
}, 60_000);

let sharedUrl: string | undefined;
/**
 * The file's one database, emptied: each test starts from no leases, waiters or cooldowns. (One
 * database rather than one per test: every DROP DATABASE at the end costs a checkpoint.)
 */
async function freshDatabase(): Promise<string> {
  sharedUrl ??= await server.createDatabase();
  const db = await openPostgres(sharedUrl, { maxConnections: 1 });
  try {
    await db.query(
      `DO $$ BEGIN
         IF to_regclass('sciencegate_rate_limit_groups') IS NOT NULL THEN
           TRUNCATE sciencegate_rate_limit_groups, sciencegate_rate_limit_leases, sciencegate_rate_limit_waiters;
         END IF;
       END $$`,
    );
  } finally {
    await db.close();
  }
  return sharedUrl;
}

/** A database and `count` replicas (each its own pool and limiter) on it. */
async function replicas(count: number, options: PostgresRateLimiterOptions) {
  const url = await freshDatabase();
  const dbs: PostgresDatabase[] = [];
  const limiters: PostgresRateLimiter[] = [];
  for (let i = 0; i < count; i++) {
    const db = await openPostgres(url, { maxConnections: 4 });
    const limiter = await PostgresRateLimiter.open(db, { listen: true, ...options });
    dbs.push(db);
    limiters.push(limiter);
    opened.push(db, limiter);
  }
  return { url, dbs, limiters };
}

/** Waits until group `g` shows exactly these counts across replicas (as the database sees them). */
const counts = (limiter: PostgresRateLimiter, active: number, queued: number) =>
  until(async () => {
    const stats = await limiter.stats("g");
    return stats.active === active && stats.queued === queued;
  });

describeRateLimitConformance("PostgresRateLimiter", async (groups) => {
  const { dbs, limiters } = await replicas(1, { groups });
  return {
    limiter: limiters[0]!,
    close: async () => {
      await limiters[0]!.close();
      await dbs[0]!.close();
    },
  };
});

describe("PostgresRateLimiter across replicas", () => {
  test("concurrency and queue depth count every replica's leases and waiters", async () => {
    const { limiters } = await replicas(2, { groups: { g: { maxConcurrentRequests: 1, maxQueueDepth: 1 } } });
    const [a, b] = limiters as [PostgresRateLimiter, PostgresRateLimiter];
    const held = await a.acquire("g");
    const queued = b.acquire("g");
    await counts(a, 1, 1);
    const refused = await a.acquire("g").catch((e: unknown) => e);
    expect(isGovernanceError(refused) && refused.code).toBe("RATE_LIMIT_QUEUE_FULL");
    held.release();
    (await queued).release();
    await counts(b, 0, 0);
  });

  test("FIFO across replicas: waiters start in the order they queued, whichever replica they are on", async () => {
    const { limiters } = await replicas(3, { groups: { g: { maxConcurrentRequests: 1 } } });
    const first = await limiters[0]!.acquire("g");
    const order: number[] = [];
    const waits: Promise<RateLimitLease>[] = [];
    for (let i = 0; i < 6; i++) {
      waits.push(
        limiters[i % 3]!.acquire("g").then((lease) => {
          order.push(i);
          return lease;
        }),
      );
      await counts(limiters[0]!, 1, i + 1); // each one queued (a row written) before the next arrives
    }
    first.release();
    for (const wait of waits) (await wait).release();
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  test("a release on one replica wakes a waiter on another at once (LISTEN/NOTIFY), not at the next poll", async () => {
    const { limiters } = await replicas(2, {
      groups: { g: { maxConcurrentRequests: 1 } },
      pollIntervalMs: 5_000,
    });
    const held = await limiters[0]!.acquire("g");
    const waiting = limiters[1]!.acquire("g");
    await counts(limiters[0]!, 1, 1);
    const released = performance.now();
    held.release();
    const lease = await waiting;
    expect(performance.now() - released).toBeLessThan(1_000);
    lease.release();
  });

  test("a replica that stops without releasing: its slot returns after the lease TTL, not before", async () => {
    const { dbs, limiters } = await replicas(2, {
      groups: { g: { maxConcurrentRequests: 1 } },
      leaseTtlMs: 900,
      pollIntervalMs: 50,
    });
    await limiters[1]!.acquire("g");
    // The replica's pool goes away: no release, no heartbeat (what a SIGKILL leaves behind).
    const died = performance.now();
    await dbs[1]!.close();
    const lease = await limiters[0]!.acquire("g");
    const returnedAfter = performance.now() - died;
    // Admitted once the row expired: between 2/3 of the TTL (last beat) and the TTL plus a poll.
    expect(returnedAfter).toBeGreaterThanOrEqual(900 * (2 / 3) - 50);
    expect(returnedAfter).toBeLessThan(900 + 50 + 500);
    lease.release();
  });

  test("the heartbeat keeps a long call's lease past its TTL", async () => {
    const { dbs, limiters } = await replicas(2, {
      groups: { g: { maxConcurrentRequests: 1, maxQueueDepth: 0 } },
      leaseTtlMs: 300,
    });
    const held = await limiters[0]!.acquire("g");
    // Until the database's clock (which decides expiry) is two TTLs past the admission.
    await until(async () => {
      const [row] = await dbs[0]!.query<{ past: boolean }>(
        "SELECT clock_timestamp() > acquired_at + interval '600 milliseconds' AS past FROM sciencegate_rate_limit_leases",
      );
      return row?.past === true;
    });
    const refused = await limiters[1]!.acquire("g").catch((e: unknown) => e);
    expect(isGovernanceError(refused) && refused.code).toBe("RATE_LIMIT_QUEUE_FULL");
    held.release();
    await counts(limiters[1]!, 0, 0);
    (await limiters[1]!.acquire("g")).release();
  });

  test("the heartbeat stops once the replica holds no lease: it never keeps an idle process alive", async () => {
    const clock = new ManualClock(0);
    const { limiters } = await replicas(1, {
      groups: { g: { maxConcurrentRequests: 1 } },
      leaseTtlMs: 30_000,
      clock,
    });
    const lease = await limiters[0]!.acquire("g");
    // The heartbeat's pause, on a process timer with the real clock.
    await until(() => clock.pendingTimers > 0, 500).catch(() => undefined);
    expect(clock.pendingTimers).toBe(1);
    lease.release();
    await until(() => clock.pendingTimers === 0, 500).catch(() => undefined);
    // Ended at once, not after the rest of its 10 s pause.
    expect(clock.pendingTimers).toBe(0);
  });

  test("a group without cap or pacing: a 429 on one replica holds the other's admissions until the cooldown ends, in FIFO order", async () => {
    const { dbs, limiters } = await replicas(2, {});
    const [a, b] = limiters as [PostgresRateLimiter, PostgresRateLimiter];
    const lease = await a.acquire("g");
    const leaseRows = async () =>
      (
        await dbs[0]!.query<{ n: number }>("SELECT count(*)::INTEGER AS n FROM sciencegate_rate_limit_leases")
      )[0]?.n;
    // Admitted while the group was clear: no lease row.
    expect(await leaseRows()).toBe(0);
    const noted = performance.now();
    lease.noteRateLimited(0.4);
    await until(async () => (await b.stats("g")).cooldownUntil !== undefined);
    const order: string[] = [];
    const first = b.acquire("g").then((l) => {
      order.push("b");
      return l;
    });
    await counts(a, 0, 1);
    const second = a.acquire("g").then((l) => {
      order.push("a");
      return l;
    });
    await counts(a, 0, 2);
    const [firstLease, secondLease] = await Promise.all([first, second]);
    expect(performance.now() - noted).toBeGreaterThanOrEqual(400 - 30);
    expect(order).toEqual(["b", "a"]);
    for (const l of [lease, firstLease, secondLease]) l.release();
    // Those admitted through the full admission had rows; their releases deleted them.
    await until(async () => (await leaseRows()) === 0);
  });

  test("a retry turn goes before a waiting admission of another replica", async () => {
    const { limiters } = await replicas(2, {
      groups: { g: { maxConcurrentRequests: 2, minIntervalMs: 200 } },
    });
    const lease = await limiters[0]!.acquire("g");
    lease.noteRateLimited(0.3);
    await until(async () => (await limiters[1]!.stats("g")).cooldownUntil !== undefined);
    let admittedAt = 0;
    const other = limiters[1]!.acquire("g").then((l) => {
      admittedAt = performance.now();
      return l;
    });
    await counts(limiters[0]!, 1, 1);
    await lease.waitForTurn();
    const turnAt = performance.now();
    const otherLease = await other;
    expect(admittedAt).toBeGreaterThan(turnAt);
    // The turn counted as a start: the admission came a pacing interval after it.
    expect(admittedAt - turnAt).toBeGreaterThanOrEqual(200 - 20);
    lease.release();
    otherLease.release();
  });
});

describe("PostgresRateLimiter failure and cost", () => {
  test("an unreachable database fails closed: a retryable UPSTREAM_UNAVAILABLE naming the group", async () => {
    const url = await freshDatabase();
    const db = await openPostgres(url, { connectionTimeoutMs: 2_000 });
    const limiter = await PostgresRateLimiter.open(db, { groups: { ncbi: { maxConcurrentRequests: 1 } } });
    await db.close();
    const error = await limiter.acquire("ncbi").catch((e: unknown) => e);
    expect(isGovernanceError(error) && error.code).toBe("UPSTREAM_UNAVAILABLE");
    expect(isGovernanceError(error) && error.retryable).toBe(true);
    expect(String((error as Error).message)).toMatch(/Rate-limit group 'ncbi'.*not sent/);
    expect(String((error as Error).message)).not.toContain("sciencegate-test");
    await limiter.close();
  });

  test("close() refuses later and waiting callers with CANCELLED", async () => {
    const { limiters } = await replicas(1, { groups: { g: { maxConcurrentRequests: 1 } } });
    const held = await limiters[0]!.acquire("g");
    const waiting = limiters[0]!.acquire("g").catch((e: unknown) => e);
    await counts(limiters[0]!, 1, 1);
    await limiters[0]!.close();
    expect(isGovernanceError(await waiting) && ((await waiting) as { code: string }).code).toBe("CANCELLED");
    const later = await limiters[0]!.acquire("g").catch((e: unknown) => e);
    expect(isGovernanceError(later) && later.code).toBe("CANCELLED");
    held.release();
  });

  test("cost per call: one statement to admit, one to release (figure printed)", async () => {
    const url = await freshDatabase();
    const db = await openPostgres(url);
    opened.push(db);
    const statements = { admit: 0, release: 0, other: 0 };
    const counting: PostgresDatabase = {
      label: db.label,
      query: (sql: string, params?: readonly SqlValue[]) => {
        if (sql.includes("sciencegate_rate_limit_admit")) statements.admit++;
        else if (sql.includes("DELETE FROM sciencegate_rate_limit_leases")) statements.release++;
        else statements.other++;
        return db.query(sql, params);
      },
      transaction: (work, options) => db.transaction(work, options),
      close: () => db.close(),
    } as PostgresDatabase;
    const limiter = await PostgresRateLimiter.open(counting, {
      groups: { g: { maxConcurrentRequests: 4, rateLimitPerSecond: 1_000_000, maxQueueDepth: 10 } },
    });
    opened.push(limiter);
    const calls = 200;
    let acquireMs = 0;
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      const lease = await limiter.acquire("g");
      acquireMs += performance.now() - started;
      lease.release();
    }
    expect(statements.admit).toBe(calls);
    expect(statements.release).toBe(calls);
    console.log(
      `PostgresRateLimiter: ${statements.admit / calls} statement to admit (${(acquireMs / calls).toFixed(2)} ms each on loopback), ${statements.release / calls} to release, ${statements.other} heartbeats in ${calls} calls`,
    );
  });

  test("cost per call of a group without cap or pacing: one read to admit, nothing to release, no lease row", async () => {
    const url = await freshDatabase();
    const db = await openPostgres(url);
    opened.push(db);
    const statements = { clear: 0, admit: 0, release: 0, other: 0 };
    const counting: PostgresDatabase = {
      label: db.label,
      query: (sql: string, params?: readonly SqlValue[]) => {
        if (sql.includes("sciencegate_rate_limit_admit")) statements.admit++;
        else if (sql.includes("DELETE FROM sciencegate_rate_limit_leases")) statements.release++;
        else if (sql.includes("AS clear")) statements.clear++;
        else statements.other++;
        return db.query(sql, params);
      },
      transaction: (work, options) => db.transaction(work, options),
      close: () => db.close(),
    } as PostgresDatabase;
    // A queue bound alone holds nothing back while the group is clear.
    const limiter = await PostgresRateLimiter.open(counting, { groups: { g: { maxQueueDepth: 5 } } });
    opened.push(limiter);
    const calls = 200;
    for (let i = 0; i < calls; i++) (await limiter.acquire("g")).release();
    expect(statements).toEqual({ clear: calls, admit: 0, release: 0, other: 0 });
    const [row] = await db.query<{ n: number }>(
      "SELECT count(*)::INTEGER AS n FROM sciencegate_rate_limit_leases",
    );
    expect(row?.n).toBe(0);
  });
});
