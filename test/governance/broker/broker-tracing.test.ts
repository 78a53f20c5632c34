import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterEach, describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import type { InvokeRequest } from "../../../src/governance/broker/broker-types.js";
import { RateLimiter } from "../../../src/governance/rate-limit/rate-limiter.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { recordSpans } from "../../core/span-recorder.js";
import { createHarness, type Harness } from "./broker-harness.js";

const recorder = recordSpans();

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

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (isGovernanceError(error)) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}

/** Lets I/O callbacks run and moves a manual clock until `promise` settles. */
async function drive<T>(clock: ManualClock, promise: Promise<T>, stepMs = 100): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  for (let i = 0; i < 2_000 && !settled; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(stepMs);
  }
  return promise;
}

describe("Broker.invoke spans", () => {
  test("a successful call is one invoke span, with its ledger row's id, over one tools/call client span", async () => {
    const h = await setup();
    const outcome = await h.broker.invoke(call("search", undefined, { threadId: "t1", toolCallId: "c1" }));
    const invoke = recorder.one("sciencegate.invoke demo/search");
    expect(invoke.kind).toBe(SpanKind.INTERNAL);
    expect(invoke.status.code).toBe(SpanStatusCode.UNSET);
    expect(invoke.attributes).toMatchObject({
      "sciencegate.invocation_id": outcome.invocationId,
      "sciencegate.session_id": "s1",
      "sciencegate.source_id": "demo",
      "sciencegate.tool_id": "search",
      "sciencegate.attempts": 1,
      "sciencegate.cache_hit": false,
      "sciencegate.replayed": false,
      "sciencegate.queue_wait_ms": 0,
      "gen_ai.conversation.id": "t1",
      "gen_ai.tool.call.id": "c1",
    });
    // The trace leads to the ledger row.
    expect(await h.ledger.get(outcome.invocationId)).toMatchObject({ status: "ok", toolId: "search" });
    const [attempt, ...others] = recorder.childrenOf(invoke);
    expect(others).toEqual([]);
    expect(attempt?.name).toBe("tools/call search");
    expect(attempt?.kind).toBe(SpanKind.CLIENT);
    expect(attempt?.attributes).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "search",
      "sciencegate.server_id": "demo",
      "sciencegate.attempt": 1,
    });
  });

  test("the queue wait is a span of its own with the time waited for a slot", async () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter({ clock, groups: { demo: { maxConcurrentRequests: 1 } } });
    const h = await setup({ clock, limiter });
    const controller = new AbortController();
    const busy = h.broker.invoke(call("hang", { query: "x" }, { signal: controller.signal }));
    while (h.state.hanging === 0) await new Promise((resolve) => setImmediate(resolve));
    const queued = h.broker.invoke(call("search"));
    while (limiter.stats("demo").queued === 0) await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(250);
    controller.abort();
    await failure(busy);
    const outcome = await queued;
    expect(outcome.queueWaitMs).toBe(250);
    const invoke = recorder.one("sciencegate.invoke demo/search");
    expect(invoke.attributes["sciencegate.queue_wait_ms"]).toBe(250);
    const children = recorder.childrenOf(invoke);
    expect(children.map((s) => s.name)).toEqual(["sciencegate.queue_wait", "tools/call search"]);
    expect(children[0]?.attributes).toEqual({
      "sciencegate.rate_limit.group": "demo",
      "sciencegate.queue_wait_ms": 250,
    });
  });

  test("a cache hit says so and has no tools/call span", async () => {
    const h = await setup();
    await h.broker.invoke(call("search"));
    recorder.reset();
    const hit = await h.broker.invoke(call("search"));
    expect(hit.cacheHit).toBe(true);
    const invoke = recorder
      .spans()
      .find((s) => s.attributes["sciencegate.invocation_id"] === hit.invocationId);
    expect(invoke?.attributes).toMatchObject({ "sciencegate.cache_hit": true, "sciencegate.attempts": 0 });
    expect(recorder.childrenOf(invoke as NonNullable<typeof invoke>)).toEqual([]);
    expect(recorder.spans().map((s) => s.name)).toEqual(["sciencegate.invoke demo/search"]);
  });

  test("a retried call has one tools/call span per attempt; the failed one says why", async () => {
    const clock = new ManualClock(0);
    const h = await setup({ clock });
    h.state.flakyFailures = 1;
    h.state.retryAfterMs = 1_000;
    const outcome = await drive(clock, h.broker.invoke(call("flaky")));
    expect(outcome.attempts).toBe(2);
    const invoke = recorder.one("sciencegate.invoke demo/flaky");
    expect(invoke.attributes["sciencegate.attempts"]).toBe(2);
    expect(invoke.status.code).toBe(SpanStatusCode.UNSET);
    const attempts = recorder.childrenOf(invoke);
    expect(attempts.map((s) => [s.name, s.attributes["sciencegate.attempt"], s.status.code])).toEqual([
      ["tools/call flaky", 1, SpanStatusCode.ERROR],
      ["tools/call flaky", 2, SpanStatusCode.UNSET],
    ]);
    // An `isError` answer is a tool error in the MCP semantic conventions.
    expect(attempts[0]?.attributes["error.type"]).toBe("tool_error");
    expect(attempts[0]?.attributes["sciencegate.error.code"]).toBe("RATE_LIMITED");
  });

  test("a failed call is an ERROR span whose error.type is the GovernanceError code and whose id is the row's", async () => {
    const h = await setup();
    const error = await failure(h.broker.invoke(call("missing")));
    expect(error.code).toBe("NOT_FOUND");
    const invoke = recorder.one("sciencegate.invoke demo/missing");
    expect(invoke.status).toEqual({ code: SpanStatusCode.ERROR, message: error.message });
    expect(invoke.attributes["error.type"]).toBe("NOT_FOUND");
    const invocationId = invoke.attributes["sciencegate.invocation_id"];
    expect(invocationId).toBe(error.data?.invocationId);
    expect(await h.ledger.get(String(invocationId))).toMatchObject({
      status: "error",
      error: { code: "NOT_FOUND" },
    });
  });

  test("a refusal before any MCP request: PERMISSION_DENIED, the authorization id, no attempt", async () => {
    const h = await setup({ authorize: () => ({ allowed: false, reason: "no", authorizationId: "auth-1" }) });
    await failure(h.broker.invoke(call("search")));
    const invoke = recorder.one("sciencegate.invoke demo/search");
    expect(invoke.attributes).toMatchObject({
      "error.type": "PERMISSION_DENIED",
      "sciencegate.authorization_id": "auth-1",
      "sciencegate.attempts": 0,
    });
    expect(recorder.childrenOf(invoke)).toEqual([]);
  });

  test("an unknown tool keeps the span name free of the model's text", async () => {
    const h = await setup();
    await failure(h.broker.invoke(call("no_such_tool_from_the_model")));
    expect(recorder.one("sciencegate.invoke").attributes["error.type"]).toBe("TOOL_UNAVAILABLE");
  });

  test("a replay is a span with the recorded row's id and replayed true", async () => {
    const h = await setup();
    const keyed = call("search", undefined, { threadId: "t1", toolCallId: "c1" });
    const first = await h.broker.invoke(keyed);
    recorder.reset();
    const again = await h.broker.invoke(keyed);
    expect(again.replayed).toBe(true);
    expect(recorder.spans().map((s) => [s.name, s.attributes["sciencegate.invocation_id"]])).toEqual([
      ["sciencegate.invoke demo/search", first.invocationId],
    ]);
    expect(recorder.spans()[0]?.attributes["sciencegate.replayed"]).toBe(true);
  });

  test("the call span is a child of the caller's active span", async () => {
    const h = await setup();
    const tracer = trace.getTracer("the-app");
    const outcome = await tracer.startActiveSpan("app run", async (run) => {
      try {
        return await h.broker.invoke(call("search"));
      } finally {
        run.end();
      }
    });
    const run = recorder.one("app run");
    const invoke = recorder.one("sciencegate.invoke demo/search");
    expect(invoke.attributes["sciencegate.invocation_id"]).toBe(outcome.invocationId);
    expect(invoke.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(invoke.spanContext().traceId).toBe(run.spanContext().traceId);
  });
});
