import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test, vi } from "vitest";
import { toGovernanceError } from "../../../src/contract/to-governance-error.js";
import { toolErrorResult } from "../../../src/contract/upstream-error.js";
import { GovernanceError, isGovernanceError } from "../../../src/core/errors.js";
import {
  DEFAULT_RETRY_POLICY,
  type RetryOptions,
  retryDelayMs,
  runWithRetry,
} from "../../../src/governance/broker/retry.js";
import { flushMicrotasks, ManualClock } from "../../../src/testing/manual-clock.js";

const noJitter = () => 0.5;

function httpError(status: number): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status });
}

/** Treats an `isError` tool result as a failure, as the broker does. */
const isErrorResult = (result: CallToolResult) => (result.isError ? toGovernanceError(result) : undefined);

/** Starts a run and records when each attempt began (clock time). */
function start<T>(
  clock: ManualClock,
  answers: Array<(signal: AbortSignal) => Promise<T>>,
  options: RetryOptions<T> = {},
) {
  const startedAt: number[] = [];
  const signals: AbortSignal[] = [];
  const run = runWithRetry<T>(
    ({ attempt, signal }) => {
      startedAt.push(clock.now());
      signals.push(signal);
      const answer = answers[Math.min(attempt, answers.length) - 1];
      if (!answer) throw new Error("no answer scripted");
      return answer(signal);
    },
    { clock, random: noJitter, ...options },
  );
  // Keep an early rejection from counting as unhandled while the test advances the clock.
  run.catch(() => {});
  return { run, startedAt, signals };
}

async function rejection(promise: Promise<unknown>): Promise<GovernanceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGovernanceError(error)) throw new Error(`expected a GovernanceError, got ${String(error)}`);
  return error;
}

const ok = (text: string): CallToolResult => ({ content: [{ type: "text", text }] });

describe("runWithRetry", () => {
  test("retries a 429 result after the server's Retry-After, then returns the success", async () => {
    const clock = new ManualClock(10_000);
    const { run, startedAt } = start<CallToolResult>(
      clock,
      [
        async () =>
          toolErrorResult({ code: "rate_limited", status: 429, retryAfterMs: 3000, message: "429" }),
        async () => ok("second time lucky"),
      ],
      { isFailure: isErrorResult },
    );
    await clock.advance(2999);
    expect(startedAt).toEqual([10_000]);
    await clock.advance(1);
    await expect(run).resolves.toEqual({ value: ok("second time lucky"), attempts: 2 });
    expect(startedAt).toEqual([10_000, 13_000]);
  });

  test("retries 5xx with exponential backoff up to maxAttempts, then fails with attempts = 3", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<string>(clock, [
      async () => {
        throw httpError(503);
      },
    ]);
    await clock.advance(10_000);
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true, attempts: 3 });
    expect(error.data).toEqual({ status: 503 });
    expect(startedAt).toEqual([0, 500, 1500]);
  });

  test.each([
    ["404", httpError(404), "NOT_FOUND"],
    ["invalid params", new McpError(ErrorCode.InvalidParams, "bad"), "INVALID_INPUT"],
    ["unknown tool", new McpError(ErrorCode.MethodNotFound, "no such tool"), "TOOL_UNAVAILABLE"],
    ["third-party error", new Error("odd"), "UPSTREAM_UNAVAILABLE"],
    ["a timeout of the attempt itself", new McpError(ErrorCode.RequestTimeout, "timed out"), "TIMEOUT"],
  ])("does not retry %s", async (_name, thrown, code) => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<string>(clock, [
      async () => {
        throw thrown;
      },
    ]);
    await clock.advance(60_000);
    const error = await rejection(run);
    expect(error.code).toBe(code);
    expect(error.attempts).toBe(1);
    expect(startedAt).toHaveLength(1);
  });

  test("does not retry a structured not_found result", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<CallToolResult>(
      clock,
      [async () => toolErrorResult({ code: "not_found", status: 404, message: "no PMID 1" })],
      { isFailure: isErrorResult },
    );
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "NOT_FOUND", retryable: false, attempts: 1, message: "no PMID 1" });
    expect(startedAt).toHaveLength(1);
  });

  test("the deadline aborts the in-flight attempt, throws TIMEOUT and ignores its late answer", async () => {
    const clock = new ManualClock(0);
    let answerLate: (value: string) => void = () => {};
    const { run, signals } = start<string>(
      clock,
      [() => new Promise<string>((resolve) => (answerLate = resolve))],
      { timeoutMs: 1000 },
    );
    await clock.advance(999);
    expect(signals[0]?.aborted).toBe(false);
    await clock.advance(1);
    expect(signals[0]?.aborted).toBe(true);
    answerLate("too late");
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "TIMEOUT", retryable: true, attempts: 1, data: { timeoutMs: 1000 } });
    expect(clock.pendingTimers).toBe(0);
  });

  test("a deadline while beforeRetry waits for its turn stops the run with TIMEOUT", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<string>(
      clock,
      [
        async () => {
          throw httpError(429);
        },
      ],
      { timeoutMs: 2000, beforeRetry: ({ signal }) => clock.sleep(60_000, signal) },
    );
    await clock.advance(2000);
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "TIMEOUT", retryable: true, attempts: 1 });
    expect(startedAt).toEqual([0]);
    expect(clock.pendingTimers).toBe(0);
  });

  test("stops early with the last 5xx when the next backoff would end after the deadline", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<string>(
      clock,
      [
        async () => {
          throw httpError(502);
        },
      ],
      { timeoutMs: 1200 },
    );
    await clock.advance(500);
    const error = await rejection(run);
    // Attempts at 0 and 500; the next would wait 1000 ms, past the deadline at 1200.
    expect(startedAt).toEqual([0, 500]);
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true, attempts: 2 });
    expect(clock.now()).toBe(500);
  });

  test("stops early with the last error when the next delay would cross the deadline", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<CallToolResult>(
      clock,
      [
        async () =>
          toolErrorResult({ code: "rate_limited", status: 429, retryAfterMs: 60_000, message: "wait" }),
      ],
      { timeoutMs: 30_000, isFailure: isErrorResult },
    );
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "RATE_LIMITED", retryable: true, retryAfterMs: 60_000, attempts: 1 });
    expect(clock.now()).toBe(0);
    expect(startedAt).toHaveLength(1);
  });

  test("cuts off a hanging MCP call: the server receives notifications/cancelled", async () => {
    const server = new McpServer({ name: "slow", version: "1.0.0" });
    let serverSignal: AbortSignal | undefined;
    server.registerTool("hang", { description: "never answers" }, (extra) => {
      serverSignal = extra.signal;
      return new Promise<CallToolResult>(() => {});
    });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientTransport);
    try {
      const clock = new ManualClock(0);
      const run = runWithRetry(
        ({ signal }) => client.callTool({ name: "hang", arguments: {} }, undefined, { signal }),
        { clock, timeoutMs: 5000 },
      );
      run.catch(() => {});
      await vi.waitFor(() => expect(serverSignal).toBeDefined());
      await clock.advance(5000);
      await expect(rejection(run)).resolves.toMatchObject({ code: "TIMEOUT", attempts: 1 });
      await vi.waitFor(() => expect(serverSignal?.aborted).toBe(true));
    } finally {
      await client.close();
      await server.close();
    }
  });

  test("a caller abort during an attempt is CANCELLED, not retryable, and aborts the attempt", async () => {
    const clock = new ManualClock(0);
    const caller = new AbortController();
    const { run, signals } = start<string>(clock, [() => new Promise<string>(() => {})], {
      signal: caller.signal,
      timeoutMs: 10_000,
    });
    await flushMicrotasks();
    caller.abort(new Error("user pressed stop"));
    const error = await rejection(run);
    expect(error).toMatchObject({ code: "CANCELLED", retryable: false, attempts: 1 });
    expect(signals[0]?.aborted).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  test("a caller abort during the backoff wait is CANCELLED without another attempt", async () => {
    const clock = new ManualClock(0);
    const caller = new AbortController();
    const { run, startedAt } = start<string>(
      clock,
      [
        async () => {
          throw httpError(500);
        },
      ],
      { signal: caller.signal },
    );
    await clock.advance(200);
    caller.abort();
    await clock.advance(10_000);
    expect(await rejection(run)).toMatchObject({ code: "CANCELLED", attempts: 1 });
    expect(startedAt).toEqual([0]);
  });

  test("an already aborted caller signal makes no attempt", async () => {
    const caller = new AbortController();
    caller.abort();
    const attempt = vi.fn(async () => "never");
    const error = await rejection(
      runWithRetry(attempt, { clock: new ManualClock(0), signal: caller.signal }),
    );
    expect(error).toMatchObject({ code: "CANCELLED", attempts: 0 });
    expect(attempt).not.toHaveBeenCalled();
  });

  test("beforeRetry sees the failure, and its wait counts towards the backoff instead of adding to it", async () => {
    const clock = new ManualClock(0);
    const seen: unknown[] = [];
    const { run, startedAt } = start<string>(
      clock,
      [
        async () => {
          throw httpError(429);
        },
        async () => "done",
      ],
      {
        beforeRetry: async ({ attempt, delayMs, failure, signal }) => {
          seen.push({ attempt, delayMs, code: failure.code });
          await clock.sleep(300, signal);
        },
      },
    );
    await clock.advance(500);
    await expect(run).resolves.toEqual({ value: "done", attempts: 2 });
    expect(seen).toEqual([{ attempt: 1, delayMs: 500, code: "RATE_LIMITED" }]);
    expect(startedAt).toEqual([0, 500]);
  });

  test("a failing beforeRetry (for example a queue timeout) ends the run with its error", async () => {
    const clock = new ManualClock(0);
    const { run } = start<string>(
      clock,
      [
        async () => {
          throw httpError(503);
        },
      ],
      {
        beforeRetry: () => {
          throw new GovernanceError("RATE_LIMIT_QUEUE_TIMEOUT", "waited too long", { retryable: true });
        },
      },
    );
    expect(await rejection(run)).toMatchObject({ code: "RATE_LIMIT_QUEUE_TIMEOUT", attempts: 1 });
  });

  test("jitter from the injected random moves the real wait", async () => {
    const clock = new ManualClock(0);
    const { run, startedAt } = start<string>(
      clock,
      [
        async () => {
          throw httpError(503);
        },
        async () => "ok",
      ],
      { random: () => 0 },
    );
    await clock.advance(400);
    await expect(run).resolves.toMatchObject({ attempts: 2 });
    expect(startedAt).toEqual([0, 400]);
  });
});

describe("retryDelayMs", () => {
  test.each([
    [0, 400],
    [0.5, 500],
    [0.999_999, 600],
  ])("with random %s the first delay is %s ms (±20 %% around 500)", (random, expected) => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, random)).toBe(expected);
  });

  test.each([
    [1, 500],
    [2, 1000],
    [3, 2000],
    [6, 10_000],
    [20, 10_000],
  ])("attempt %s waits %s ms without jitter (capped at maxDelayMs)", (attempt, expected) => {
    expect(retryDelayMs({ ...DEFAULT_RETRY_POLICY, jitter: 0 }, attempt, 0.5)).toBe(expected);
  });

  test("jitter never pushes a capped delay above maxDelayMs", () => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 10, 0.999)).toBe(10_000);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 10, 0)).toBe(8000);
  });

  test("Retry-After wins over a shorter computed delay, even above the cap", () => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, 0.5, 2500)).toBe(2500);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, 0.5, 30_000)).toBe(30_000);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 3, 0.5, 100)).toBe(2000);
  });
});
