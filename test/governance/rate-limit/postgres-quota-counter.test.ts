/**
 * Quota counts in PostgreSQL: replicas (each its own pool) share one count, so a principal's calls
 * spread over them are admitted exactly `calls` times per window; a call refused by one rule counts
 * in none; an unreachable database refuses the call.
 */
import { afterAll, describe, expect, test } from "vitest";
import { isGovernanceError, openPostgres, type PostgresDatabase } from "../../../src/core/index.js";
import {
  PostgresQuotaCounter,
  parseQuotaRules,
  QuotaLimiter,
} from "../../../src/governance/rate-limit/index.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { useTestSchemas } from "../../postgres/fresh-schema.js";

const schemas = useTestSchemas();
const opened: PostgresDatabase[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close().catch(() => {});
});

async function replica(url: string, rules: string, clock: ManualClock): Promise<QuotaLimiter> {
  const db = await openPostgres(url, { maxConnections: 4 });
  opened.push(db);
  return new QuotaLimiter({
    rules: parseQuotaRules(rules),
    counter: await PostgresQuotaCounter.open(db),
    clock,
  });
}

async function outcome(promise: Promise<void>): Promise<string> {
  try {
    await promise;
    return "admitted";
  } catch (error) {
    return isGovernanceError(error) ? error.code : String(error);
  }
}

describe("PostgresQuotaCounter", () => {
  test("two replicas admitting one principal's calls at once admit exactly the quota, per principal", async () => {
    const url = await schemas.next();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const [a, b] = await Promise.all([
      replica(url, "pubmed/search=5/1h", clock),
      replica(url, "pubmed/search=5/1h", clock),
    ]);
    const call = (principal: string) => ({ principal, sourceId: "pubmed", toolId: "search" });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => outcome((i % 2 === 0 ? a : b).admit(call("alice")))),
    );
    expect(results.filter((r) => r === "admitted")).toHaveLength(5);
    expect(results.filter((r) => r === "QUOTA_EXCEEDED")).toHaveLength(7);
    // Bob's count is his own, on either replica.
    expect(await outcome(b.admit(call("bob")))).toBe("admitted");
    // The next window starts afresh for everyone.
    await clock.advance(3_600_000);
    expect(await outcome(a.admit(call("alice")))).toBe("admitted");
  });

  test("a call one rule refuses is counted by no other rule, across replicas", async () => {
    const url = await schemas.next();
    const clock = new ManualClock(0);
    const rules = "pubmed=3/1h pubmed/search=1/1h";
    const [a, b] = await Promise.all([replica(url, rules, clock), replica(url, rules, clock)]);
    const call = (toolId: string) => ({ principal: "alice", sourceId: "pubmed", toolId });
    expect(await outcome(a.admit(call("search")))).toBe("admitted");
    expect(await outcome(b.admit(call("search")))).toBe("QUOTA_EXCEEDED");
    expect(await outcome(a.admit(call("search")))).toBe("QUOTA_EXCEEDED");
    expect(await outcome(b.admit(call("fetch")))).toBe("admitted");
    expect(await outcome(a.admit(call("fetch")))).toBe("admitted");
    expect(await outcome(b.admit(call("fetch")))).toBe("QUOTA_EXCEEDED");
  });

  test("when the database cannot be reached, the call is refused (UPSTREAM_UNAVAILABLE, retryable)", async () => {
    const url = await schemas.next();
    const db = await openPostgres(url, { maxConnections: 1 });
    const quotas = new QuotaLimiter({
      rules: parseQuotaRules("*=10/1h"),
      counter: await PostgresQuotaCounter.open(db),
    });
    await db.close();
    const refused = await quotas.admit({ principal: "alice", sourceId: "pubmed", toolId: "search" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
  });
});
