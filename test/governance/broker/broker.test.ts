import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import type { InvokeRequest } from "../../../src/governance/broker/broker-types.js";
import { RateLimiter } from "../../../src/governance/rate-limit/rate-limiter.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { createHarness, type Harness } from "./broker-harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function setup(...args: Parameters<typeof createHarness>): Promise<Harness> {
  harness = await createHarness(...args);
  return harness;
}

function call(toolId: string, input: unknown = { query: "brca1" }, extra: Partial<InvokeRequest> = {}) {
  return { sourceId: "demo", toolId, input, sessionId: "s1", ...extra };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return isGovernanceError(error) ? error.code : `non-governance: ${String(error)}`;
  }
}

/** Lets I/O callbacks run and moves a manual clock until `promise` settles. */
async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < 2_000 && !settled; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(stepMs);
  }
  return promise;
}

describe("Broker.invoke", () => {
  test("returns a normalized result with manifest licence and writes CAS refs and one ledger row", async () => {
    const h = await setup();
    const outcome = await h.broker.invoke(call("search"));
    expect(outcome.result.records.map((r) => r.identifier)).toEqual(["brca1"]);
    expect(outcome.result).toMatchObject({ license: "CC0-1.0", attribution: "Test data", untrusted: true });
    const row = await h.ledger.get(outcome.invocationId);
    expect(row).toMatchObject({
      status: "ok",
      attempts: 1,
      cacheHit: false,
      sourceId: "demo",
      toolId: "search",
    });
    for (const ref of [row?.requestRef, row?.rawRef, row?.normalizedRef]) {
      expect(ref).toMatch(/^sha256:/);
      expect(await h.store.verify(ref as string)).toBe(true);
    }
    expect(await h.store.getJson(row?.normalizedRef as string)).toEqual(outcome.result);
    expect(row?.toolDefinitionHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.catalogRevision).toBe(h.catalog.revision);
  });

  test.each([
    ["INVALID_INPUT", "search", { limit: "many" }],
    ["TOOL_UNAVAILABLE", "no_such_tool", { query: "x" }],
    ["NOT_FOUND", "missing", { query: "x" }],
    ["NORMALIZATION_FAILED", "forged", { query: "x" }],
    ["RESPONSE_TOO_LARGE", "big", { query: "x" }],
  ])("%s is thrown and recorded", async (code, toolId, input) => {
    const h = await setup();
    expect(await codeOf(h.broker.invoke(call(toolId, input)))).toBe(code);
    const rows = await h.ledger.query({ sessionId: "s1" });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "error", error: { code } });
    expect(rows[0]?.requestRef).toMatch(/^sha256:/);
  });

  test.each([
    ["unauthorized:401", "UNAUTHORIZED", 1],
    ["not_open_access", "LICENSE_BLOCKED", 1],
    ["invalid_id:400", "INVALID_INPUT", 1],
    ["upstream_unavailable:503", "UPSTREAM_UNAVAILABLE", 3],
    ["upstream_unavailable:422", "UPSTREAM_UNAVAILABLE", 1],
  ])("a server's structured %s becomes %s after %i attempt(s)", async (query, code, attempts) => {
    const clock = new ManualClock(0);
    const h = await setup({ clock });
    expect(await codeOf(drive(clock, h.broker.invoke(call("fail", { query }))))).toBe(code);
    expect(h.state.calls.fail).toBe(attempts);
    expect((await h.ledger.query())[0]).toMatchObject({ attempts, error: { code } });
  });

  test("a third-party tool that raises is TOOL_FAILED with its own text: not retried, and the row says the same", async () => {
    const h = await setup();
    const error = await h.broker.invoke(call("throws", { query: "x" })).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "GovernanceError",
      code: "TOOL_FAILED",
      retryable: false,
      attempts: 1,
      message: "cannot read properties of undefined (reading 'x')",
    });
    expect(h.state.calls.throws).toBe(1);
    const rows = await h.ledger.query();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      invocationId: (error as { data: { invocationId: string } }).data.invocationId,
      status: "error",
      attempts: 1,
      error: { code: "TOOL_FAILED", message: (error as Error).message, retryable: false, attempts: 1 },
    });
  });

  test("a server whose connection closes mid-call is still UPSTREAM_UNAVAILABLE, retried, and so recorded", async () => {
    const clock = new ManualClock(0);
    const h = await setup({ clock });
    const error = await drive(clock, h.broker.invoke(call("crash", { query: "x" }))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true, attempts: 3 });
    expect(h.state.calls.crash).toBe(3);
    const [row] = await h.ledger.query();
    expect(row).toMatchObject({ attempts: 3, error: { code: "UPSTREAM_UNAVAILABLE", retryable: true } });
  });

  test("RATE_LIMIT_QUEUE_TIMEOUT when a queued call waits too long", async () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({
      clock,
      groups: { demo: { maxConcurrentRequests: 1, queueTimeoutMs: 1_000 } },
    });
    const h = await setup({ clock, limiter });
    const controller = new AbortController();
    const busy = h.broker.invoke(call("hang", { query: "x" }, { signal: controller.signal }));
    while (h.state.hanging === 0) await new Promise((resolve) => setImmediate(resolve));
    const queued = h.broker.invoke(call("search"));
    expect(await codeOf(drive(clock, queued))).toBe("RATE_LIMIT_QUEUE_TIMEOUT");
    controller.abort();
    await codeOf(busy);
    expect(h.state.calls.search).toBeUndefined();
    const rows = await h.ledger.query();
    expect(rows.map((r) => r.error?.code).sort()).toEqual(["CANCELLED", "RATE_LIMIT_QUEUE_TIMEOUT"]);
  });

  test("INVALID_INPUT lists every issue with its path", async () => {
    const h = await setup();
    try {
      await h.broker.invoke(call("search", { limit: 1.5, extra: 1 }));
      expect.unreachable();
    } catch (error) {
      expect(isGovernanceError(error) && error.data?.issues).toEqual(
        expect.arrayContaining([
          { path: "query", message: "is required" },
          { path: "limit", message: "must be integer" },
        ]),
      );
    }
  });

  test("SOURCE_DISABLED when the session switched the source off; nothing is called", async () => {
    const h = await setup();
    h.broker.sessions.disableSource("s1", "demo");
    expect(await codeOf(h.broker.invoke(call("search")))).toBe("SOURCE_DISABLED");
    expect(h.state.calls.search).toBeUndefined();
    expect(await h.broker.invoke(call("search", { query: "x" }, { sessionId: "s2" }))).toBeDefined();
  });

  test("PERMISSION_DENIED from a denial or a throwing hook calls nothing and records the authorization id", async () => {
    const h = await setup({
      authorize: () => ({ allowed: false, reason: "not today", authorizationId: "auth-1" }),
    });
    expect(await codeOf(h.broker.invoke(call("search")))).toBe("PERMISSION_DENIED");
    expect(h.state.calls.search).toBeUndefined();
    const [row] = await h.ledger.query();
    expect(row).toMatchObject({ authorizationId: "auth-1", error: { code: "PERMISSION_DENIED" } });

    const h2 = await createHarness({
      authorize: () => {
        throw new Error("policy store down");
      },
    });
    expect(await codeOf(h2.broker.invoke(call("search")))).toBe("PERMISSION_DENIED");
    expect(h2.state.calls.search).toBeUndefined();
    await h2.close();
  });

  test("a cache hit takes no MCP call, is audited, and still needs permission", async () => {
    let allow = true;
    const h = await setup({
      authorize: () => (allow ? { allowed: true } : { allowed: false, reason: "revoked" }),
    });
    const first = await h.broker.invoke(call("search"));
    const second = await h.broker.invoke(call("search", { query: "brca1", limit: "" }));
    expect(second.cacheHit).toBe(true);
    expect(second.result).toEqual(first.result);
    expect(h.state.calls.search).toBe(1);
    allow = false;
    expect(await codeOf(h.broker.invoke(call("search")))).toBe("PERMISSION_DENIED");
    expect(h.state.calls.search).toBe(1);
    const rows = await h.ledger.query();
    expect(rows.map((r) => [r.status, r.cacheHit, r.error?.code])).toEqual([
      ["ok", false, undefined],
      ["ok", true, undefined],
      ["error", false, "PERMISSION_DENIED"],
    ]);
  });

  test.each([
    ["a tool that is not read-only", "write", {}],
    ["a private source", "search", { governance: { dataClassification: "private" } }],
    ["a source with cache disabled", "search", { cache: { enabled: false, ttlSeconds: 60 } }],
  ])("never caches %s", async (_label, toolId, override) => {
    const base = (await import("../manifests/manifest-factory.js")).makeSource();
    const overrides = {
      ...override,
      ...("governance" in override ? { governance: { ...base.governance, ...override.governance } } : {}),
    };
    const h = await setup({}, overrides as Parameters<typeof createHarness>[1]);
    await h.broker.invoke(call(toolId));
    const again = await h.broker.invoke(call(toolId));
    expect(again.cacheHit).toBe(false);
    expect(h.state.calls[toolId]).toBe(2);
  });

  test("a 429 then 200 is retried after Retry-After under one rate-limit lease", async () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({ clock, groups: { demo: { maxConcurrentRequests: 1 } } });
    const h = await setup({ clock, limiter });
    h.state.flakyFailures = 1;
    h.state.retryAfterMs = 2_000;
    const outcome = await drive(clock, h.broker.invoke(call("flaky")));
    expect(outcome.attempts).toBe(2);
    expect(clock.now()).toBeGreaterThanOrEqual(2_000);
    expect(h.state.calls.flaky).toBe(2);
    expect(limiter.stats("demo").active).toBe(0);
    expect(await h.ledger.get(outcome.invocationId)).toMatchObject({ status: "ok", attempts: 2 });
  });

  test("RATE_LIMITED after every attempt answered 429", async () => {
    const clock = new ManualClock(0);
    const h = await setup({ clock });
    h.state.flakyFailures = 10;
    h.state.retryAfterMs = 100;
    expect(await codeOf(drive(clock, h.broker.invoke(call("flaky"))))).toBe("RATE_LIMITED");
    expect(h.state.calls.flaky).toBe(3);
    const [row] = await h.ledger.query();
    expect(row).toMatchObject({ attempts: 3, error: { code: "RATE_LIMITED", retryable: true, attempts: 3 } });
  });

  test("TIMEOUT cancels the hanging MCP request and records the error", async () => {
    const clock = new ManualClock(0);
    const h = await setup({ clock });
    expect(await codeOf(drive(clock, h.broker.invoke(call("hang")), 500))).toBe("TIMEOUT");
    // The cancellation reaches the server over the in-memory transport.
    await vi.waitFor(() => expect(h.state.cancelled).toBe(1));
    expect((await h.ledger.query())[0]?.error).toMatchObject({ code: "TIMEOUT", retryable: true });
  });

  test("CANCELLED when the caller aborts", async () => {
    const h = await setup();
    const controller = new AbortController();
    const pending = h.broker.invoke(call("hang", { query: "x" }, { signal: controller.signal }));
    while (h.state.hanging === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect(await codeOf(pending)).toBe("CANCELLED");
    expect((await h.ledger.query())[0]?.error).toMatchObject({ code: "CANCELLED", retryable: false });
  });

  test("RATE_LIMIT_QUEUE_FULL when the group is busy and may not queue", async () => {
    const limiter = new RateLimiter({ groups: { demo: { maxConcurrentRequests: 1, maxQueueDepth: 0 } } });
    const h = await setup({ limiter });
    const controller = new AbortController();
    const busy = h.broker.invoke(call("hang", { query: "x" }, { signal: controller.signal }));
    while (h.state.hanging === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(await codeOf(h.broker.invoke(call("search")))).toBe("RATE_LIMIT_QUEUE_FULL");
    controller.abort();
    await codeOf(busy);
    expect(h.state.calls.search).toBeUndefined();
  });

  test("records of foreign hosts and candidates on foreign hosts are dropped with warnings", async () => {
    const h = await setup();
    const { result } = await h.broker.invoke(call("attacker"));
    expect(result.records.map((r) => r.identifier)).toEqual(["good"]);
    expect(result.artifacts?.map((a) => a.candidateId)).toEqual(["c2"]);
    expect(result.warnings.join("\n")).toContain("evil.example.net");
  });

  test("the same threadId:toolCallId runs once and replays the recorded result", async () => {
    const h = await setup();
    const key = { threadId: "t1", toolCallId: "call-1" };
    const [a, b] = await Promise.all([
      h.broker.invoke(call("write", { query: "x" }, key)),
      h.broker.invoke(call("write", { query: "x" }, key)),
    ]);
    const c = await h.broker.invoke(call("write", { query: "x" }, key));
    expect(h.state.calls.write).toBe(1);
    expect(c.replayed).toBe(true);
    expect(c.result).toEqual(a.result);
    expect(b.invocationId).toBe(a.invocationId);
    expect(await h.ledger.query()).toHaveLength(1);
  });

  test("a recorded failure replays as the same error without calling again", async () => {
    const h = await setup();
    const key = { threadId: "t1", toolCallId: "call-2" };
    expect(await codeOf(h.broker.invoke(call("missing", { query: "x" }, key)))).toBe("NOT_FOUND");
    expect(await codeOf(h.broker.invoke(call("missing", { query: "x" }, key)))).toBe("NOT_FOUND");
    expect(h.state.calls.missing).toBe(1);
  });

  test("200 concurrent invocations lose no ledger row", async () => {
    const h = await setup({}, { cache: { enabled: false, ttlSeconds: 0 } });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => h.broker.invoke(call("search", { query: `q${i}` }))),
    );
    expect(new Set(results.map((r) => r.invocationId)).size).toBe(200);
    expect(await h.ledger.query({ limit: 1000 })).toHaveLength(200);
    expect(h.state.calls.search).toBe(200);
  });

  describe("a threadId:toolCallId is bound to its session, source, tool and arguments", () => {
    const key = { threadId: "t1", toolCallId: "call-a" };

    test("another session naming A's key with another tool is refused and audited, without A's result", async () => {
      const h = await setup();
      const a = await h.broker.invoke(call("write", { query: "secret" }, { ...key, sessionId: "A" }));
      let caught: unknown;
      await h.broker.invoke(call("search", { query: "x" }, { ...key, sessionId: "B" })).catch((e) => {
        caught = e;
      });
      expect(isGovernanceError(caught) && caught.code).toBe("PERMISSION_DENIED");
      expect(String((caught as Error).message)).toContain("already used for a different call");
      expect(JSON.stringify(caught)).not.toContain(a.invocationId);
      const rowsOfB = await h.ledger.query({ sessionId: "B" });
      expect(rowsOfB).toHaveLength(1);
      expect(rowsOfB[0]).toMatchObject({ status: "error", threadId: "t1", toolId: "search" });
      expect(rowsOfB[0]?.toolCallId).toBeUndefined();
      expect(rowsOfB[0]?.error?.message).toContain("call-a");
      expect(h.state.calls.search).toBeUndefined();
      expect((await h.ledger.findByCall("t1", "call-a"))?.invocationId).toBe(a.invocationId);
    });

    test("the same tool and arguments from another session are refused, A's replay is served", async () => {
      const h = await setup();
      const a = await h.broker.invoke(call("write", { query: "x" }, { ...key, sessionId: "A" }));
      expect(await codeOf(h.broker.invoke(call("write", { query: "x" }, { ...key, sessionId: "B" })))).toBe(
        "PERMISSION_DENIED",
      );
      const again = await h.broker.invoke(call("write", { query: "x" }, { ...key, sessionId: "A" }));
      expect(again).toMatchObject({ replayed: true, invocationId: a.invocationId, result: a.result });
      expect(await codeOf(h.broker.invoke(call("write", { query: "y" }, { ...key, sessionId: "A" })))).toBe(
        "PERMISSION_DENIED",
      );
      expect(h.state.calls.write).toBe(1);
      expect(await h.ledger.query({ sessionId: "B" })).toHaveLength(1);
    });

    test("another session cannot join A's running call by its key", async () => {
      const h = await setup();
      const controller = new AbortController();
      const running = h.broker.invoke(
        call("hang", { query: "x" }, { ...key, sessionId: "A", signal: controller.signal }),
      );
      while (h.state.hanging === 0) await new Promise((resolve) => setImmediate(resolve));
      expect(await codeOf(h.broker.invoke(call("hang", { query: "x" }, { ...key, sessionId: "B" })))).toBe(
        "PERMISSION_DENIED",
      );
      controller.abort();
      expect(await codeOf(running)).toBe("CANCELLED");
      expect(h.state.calls.hang).toBe(1);
    });

    test("on the SQLite ledger the refusal row does not clash with the key's row", async () => {
      const dir = await mkdtemp(join(tmpdir(), "sg-replay-"));
      const ledger = await SqliteLedger.open(join(dir, "ledger.sqlite"));
      try {
        const h = await setup({ ledger });
        const a = await h.broker.invoke(call("write", { query: "x" }, { ...key, sessionId: "A" }));
        for (const session of ["B", "B"]) {
          expect(
            await codeOf(h.broker.invoke(call("search", { query: "x" }, { ...key, sessionId: session }))),
          ).toBe("PERMISSION_DENIED");
        }
        expect(await ledger.query({ sessionId: "B", status: "error" })).toHaveLength(2);
        const again = await h.broker.invoke(call("write", { query: "x" }, { ...key, sessionId: "A" }));
        expect(again.invocationId).toBe(a.invocationId);
        expect(again.replayed).toBe(true);
      } finally {
        await ledger.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
