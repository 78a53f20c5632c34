/**
 * Quotas per principal: the text form of the rules, which calls each rule counts, all-or-nothing
 * counting over several rules, fixed windows on the clock, and the broker refusing a call past its
 * quota with a row and nothing sent.
 */
import { afterEach, describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import { QuotaLimiter } from "../../../src/governance/rate-limit/quota-limiter.js";
import { parseQuotaRules, resolveQuotaRules } from "../../../src/governance/rate-limit/quota-rules.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { createHarness, type Harness } from "../broker/broker-harness.js";

const HOUR = 3_600_000;

async function refusal(promise: Promise<unknown>): Promise<Record<string, unknown> | "admitted"> {
  try {
    await promise;
    return "admitted";
  } catch (error) {
    if (!isGovernanceError(error)) throw error;
    return { code: error.code, retryable: error.retryable, retryAfterMs: error.retryAfterMs, ...error.data };
  }
}

describe("parseQuotaRules", () => {
  test.each([
    ["pubmed/search=100/1h", [{ match: "pubmed/search", calls: 100, windowMs: HOUR }]],
    ["pubmed/*=5/30s", [{ match: "pubmed/*", calls: 5, windowMs: 30_000 }]],
    ["pubmed=1000/d", [{ match: "pubmed", calls: 1000, windowMs: 24 * HOUR }]],
    [
      " *=600/1h,  */*=60/m ",
      [
        { match: "*", calls: 600, windowMs: HOUR },
        { match: "*/*", calls: 60, windowMs: 60_000 },
      ],
    ],
    ["", []],
  ])("%j", (spec, rules) => {
    expect(parseQuotaRules(spec)).toEqual(rules);
  });

  test.each([
    ["pubmed/search=100", "write <match>=<calls>/<window>"],
    ["pubmed/search=0/1h", "calls must be a whole number of at least 1"],
    ["pubmed/search=10/500ms", "at least 1000"],
    ["*/search=10/1h", "match must be"],
    ["a/b/c=10/1h", "match must be"],
    ["=10/1h", "write <match>"],
    ["pubmed/search=10/1w", "write <match>"],
  ])("%j is INVALID_CONFIG (%s)", (spec, message) => {
    expect(() => parseQuotaRules(spec)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
    expect(() => parseQuotaRules(spec)).toThrow(message);
  });

  test("a rule given as an object is checked the same way", () => {
    expect(() => resolveQuotaRules([{ match: "pubmed", calls: 1.5, windowMs: HOUR }])).toThrow(
      "calls must be a whole number",
    );
  });
});

describe("QuotaLimiter", () => {
  const call = (principal: string | undefined, sourceId = "pubmed", toolId = "search") => ({
    principal,
    sourceId,
    toolId,
  });

  test("each principal has its own count per tool; the window ends on the clock and says when", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 10, 15));
    const quotas = new QuotaLimiter({ rules: parseQuotaRules("pubmed/search=2/1h"), clock });
    await quotas.admit(call("alice"));
    await quotas.admit(call("alice"));
    expect(await refusal(quotas.admit(call("alice")))).toEqual({
      code: "QUOTA_EXCEEDED",
      retryable: true,
      retryAfterMs: 45 * 60_000,
      rule: "pubmed/search=2/3600000ms",
      limit: 2,
      windowEndsAt: "2026-01-01T11:00:00.000Z",
    });
    // Another principal, the single user, and another tool are not counted in alice's window.
    expect(await refusal(quotas.admit(call("bob")))).toBe("admitted");
    expect(await refusal(quotas.admit(call(undefined)))).toBe("admitted");
    expect(await refusal(quotas.admit(call("alice", "pubmed", "fetch")))).toBe("admitted");
    await clock.advance(45 * 60_000);
    expect(await refusal(quotas.admit(call("alice")))).toBe("admitted");
  });

  test("a source rule counts its tools together; */* counts each tool; * each source", async () => {
    const clock = new ManualClock(0);
    const together = new QuotaLimiter({ rules: parseQuotaRules("pubmed=2/1h"), clock });
    await together.admit(call("alice", "pubmed", "search"));
    await together.admit(call("alice", "pubmed", "fetch"));
    expect(await refusal(together.admit(call("alice", "pubmed", "other")))).toMatchObject({
      code: "QUOTA_EXCEEDED",
    });
    expect(await refusal(together.admit(call("alice", "arxiv", "search")))).toBe("admitted");

    const eachTool = new QuotaLimiter({ rules: parseQuotaRules("*/*=1/1h"), clock });
    await eachTool.admit(call("alice", "pubmed", "search"));
    expect(await refusal(eachTool.admit(call("alice", "pubmed", "fetch")))).toBe("admitted");
    expect(await refusal(eachTool.admit(call("alice", "pubmed", "search")))).toMatchObject({
      code: "QUOTA_EXCEEDED",
    });

    const eachSource = new QuotaLimiter({ rules: parseQuotaRules("*=1/1h"), clock });
    await eachSource.admit(call("alice", "pubmed", "search"));
    expect(await refusal(eachSource.admit(call("alice", "arxiv", "search")))).toBe("admitted");
    expect(await refusal(eachSource.admit(call("alice", "pubmed", "fetch")))).toMatchObject({
      code: "QUOTA_EXCEEDED",
    });
  });

  test("a call refused by one rule is counted by none", async () => {
    const clock = new ManualClock(0);
    const quotas = new QuotaLimiter({ rules: parseQuotaRules("pubmed=3/1h pubmed/search=1/1h"), clock });
    await quotas.admit(call("alice", "pubmed", "search"));
    // Refused by the tool rule: the source rule must not count these.
    for (let i = 0; i < 3; i++) {
      expect(await refusal(quotas.admit(call("alice", "pubmed", "search")))).toMatchObject({
        rule: "pubmed/search=1/3600000ms",
      });
    }
    await quotas.admit(call("alice", "pubmed", "fetch"));
    await quotas.admit(call("alice", "pubmed", "fetch"));
    expect(await refusal(quotas.admit(call("alice", "pubmed", "fetch")))).toMatchObject({
      rule: "pubmed=3/3600000ms",
    });
  });
});

describe("the broker's quota step", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  test("a call past its principal's quota is QUOTA_EXCEEDED with a row naming the principal, and nothing is sent", async () => {
    const clock = new ManualClock(0);
    harness = await createHarness({
      clock,
      quotas: new QuotaLimiter({ rules: parseQuotaRules("demo/search=1/1h"), clock }),
    });
    const h = harness;
    const invoke = (principal: string, query: string) =>
      h.broker.invoke({
        sourceId: "demo",
        toolId: "search",
        input: { query },
        sessionId: "shared",
        principal,
      });
    await invoke("alice", "a1");
    expect(await refusal(invoke("alice", "a2"))).toMatchObject({ code: "QUOTA_EXCEEDED" });
    await invoke("bob", "b1");
    expect(h.state.calls.search).toBe(2);
    const rows = await h.ledger.query({ sessionId: "shared" });
    expect(rows.map((r) => [r.principal, r.status, r.error?.code])).toEqual([
      ["alice", "ok", undefined],
      ["alice", "error", "QUOTA_EXCEEDED"],
      ["bob", "ok", undefined],
    ]);
  });
});
