import { SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, test } from "vitest";
import { GovernanceError } from "../../src/core/errors.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { flushMicrotasks, ManualClock } from "../../src/testing/manual-clock.js";
import { isAlive, serverConfig, stdioTestServer } from "./server-configs.js";

const text = (result: CallToolResult): string =>
  result.content[0]?.type === "text" ? result.content[0].text : "";
const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error) => error,
  );

describe("ServerPool with a real stdio server", () => {
  // One process serves the whole block (each tsx spawn costs about half a second).
  const pool = new ServerPool([stdioTestServer("paged", { TEST_SERVER_FILLER_TOOLS: "250" })], {
    stderrLines: 5,
  });
  const pids = new Set<number>();
  const stats = async () =>
    JSON.parse(text(await pool.callTool("paged", "stats", {}))) as Record<string, number>;
  afterAll(() => pool.close());

  test("ten concurrent first calls spawn one process", async () => {
    expect(pool.state("paged")).toMatchObject({ status: "idle", starts: 0 });
    const lists = await Promise.all(Array.from({ length: 10 }, () => pool.listTools("paged")));
    const whoami = await Promise.all(Array.from({ length: 5 }, () => pool.callTool("paged", "whoami", {})));
    const state = pool.state("paged");
    expect(state).toMatchObject({ status: "connected", starts: 1 });
    expect(new Set(whoami.map(text))).toEqual(new Set([String(state.pid)]));
    expect(new Set(lists.map((tools) => tools.length)).size).toBe(1);
    if (state.pid) pids.add(state.pid);
  });

  test("listTools follows nextCursor past the first page and caches the list", async () => {
    const tools = await pool.listTools("paged");
    expect(tools).toHaveLength(257); // 7 fixed + 250 fillers in pages of 100
    expect(tools.at(-1)?.name).toBe("filler_250");
    expect(new Set(tools.map((tool) => tool.name)).size).toBe(257);
    await pool.listTools("paged");
    expect((await stats()).listCalls).toBe(3);
  });

  test("tools/list_changed fires the listener and listTools returns the new tool", async () => {
    const changed = new Promise<string>((resolve) => {
      const stop = pool.onToolsChanged((id) => {
        stop();
        resolve(id);
      });
    });
    await pool.callTool("paged", "add_tool", { name: "added_tool" });
    await expect(changed).resolves.toBe("paged");
    const names = (await pool.listTools("paged")).map((tool) => tool.name);
    expect(names).toContain("added_tool");
    expect(names).toHaveLength(258);
    expect((await stats()).listCalls).toBe(6);
  });

  test("the progress callback receives every notifications/progress of the call", async () => {
    const seen: unknown[] = [];
    const result = await pool.callTool(
      "paged",
      "slow",
      { steps: 3, delayMs: 5 },
      { onProgress: (p) => seen.push(p) },
    );
    expect(text(result)).toBe("done after 3 steps");
    expect(seen).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
  });

  test("aborting the signal rejects the call and cancels it on the server", async () => {
    const controller = new AbortController();
    const before = (await stats()).cancelled ?? 0;
    const call = pool.callTool(
      "paged",
      "slow",
      { steps: 100, delayMs: 5 },
      { signal: controller.signal, onProgress: () => controller.abort("user stopped") },
    );
    const error = await rejection(call);
    expect(error).toBeInstanceOf(SdkError);
    expect((error as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
    expect((error as SdkError).message).toContain("user stopped");
    expect((await stats()).cancelled).toBe(before + 1);
  });

  test("timeoutMs rejects a slow call with the SDK's timeout error", async () => {
    const error = await rejection(
      pool.callTool("paged", "slow", { steps: 1, delayMs: 10_000 }, { timeoutMs: 50 }),
    );
    expect(error).toBeInstanceOf(SdkError);
    expect((error as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
    expect(pool.state("paged").status).toBe("connected");
  });

  test("state keeps only the last stderr lines", async () => {
    await pool.callTool("paged", "write_stderr", { count: 12 });
    // stderr is a separate pipe: give its bytes a moment to arrive.
    await expect.poll(() => pool.state("paged").stderrTail?.at(-1)).toBe("stderr line 12");
    expect(pool.state("paged").stderrTail).toEqual([8, 9, 10, 11, 12].map((i) => `stderr line ${i}`));
  });

  test("close() rejects calls in flight, leaves no process, and nothing restarts afterwards", async () => {
    const pid = pool.state("paged").pid;
    expect(pid).toBeDefined();
    if (pid) pids.add(pid);
    const inFlight = rejection(pool.callTool("paged", "slow", { steps: 1, delayMs: 60_000 }));
    await pool.close();
    const error = await inFlight;
    expect(error).toMatchObject({ name: "GovernanceError", code: "UPSTREAM_UNAVAILABLE" });
    for (const spawned of pids) expect(isAlive(spawned)).toBe(false);
    const after = await rejection(pool.listTools("paged"));
    expect(after).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: false });
    expect((after as Error).message).toContain("pool is closed");
    expect(pool.state("paged")).toMatchObject({ status: "closed", starts: 1 });
    expect(pool.state("paged").pid).toBeUndefined();
  });
});

describe("ServerPool restarts a dead stdio server", () => {
  test("a crash fails the call with its stderr; the next use restarts after the clock's backoff", async () => {
    const clock = new ManualClock(0);
    const pool = new ServerPool([stdioTestServer("crashy")], { clock });
    try {
      await pool.listTools("crashy");
      const firstPid = pool.state("crashy").pid;
      expect(firstPid).toBeDefined();

      const crash = await rejection(pool.callTool("crashy", "crash", { message: "boom from the test" }));
      expect(crash).toBeInstanceOf(GovernanceError);
      expect(crash).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
      expect((crash as Error).message).toMatch(/'crashy'[\s\S]*boom from the test/);
      expect(pool.state("crashy")).toMatchObject({ status: "failed", starts: 1 });
      expect(pool.state("crashy").pid).toBeUndefined();
      expect(isAlive(firstPid ?? 0)).toBe(false);

      const changed: string[] = [];
      pool.onToolsChanged((id) => changed.push(id));
      const again = pool.listTools("crashy");
      await flushMicrotasks();
      expect(clock.pendingTimers).toBe(1);
      await clock.advance(249);
      expect(pool.state("crashy").starts).toBe(1);
      await clock.advance(1);
      expect((await again).map((tool) => tool.name)).toContain("crash");

      const state = pool.state("crashy");
      expect(state).toMatchObject({ status: "connected", starts: 2 });
      expect(state.pid).toBeDefined();
      expect(state.pid).not.toBe(firstPid);
      expect(changed).toEqual(["crashy"]);
      expect(state.stderrTail).toContain("boom from the test");
      await pool.close();
      expect(isAlive(state.pid ?? 0)).toBe(false);
    } finally {
      await pool.close();
    }
  });

  test("a server that exits at start fails with its stderr tail in the error and in state()", async () => {
    const pool = new ServerPool([
      stdioTestServer("broken", { TEST_SERVER_FAIL_AT_START: "fatal: missing API key|hint: set TEST_KEY" }),
    ]);
    try {
      const error = await rejection(pool.listTools("broken"));
      expect(error).toMatchObject({ name: "GovernanceError", code: "UPSTREAM_UNAVAILABLE", retryable: true });
      expect((error as Error).message).toMatch(
        /'broken' could not be started[\s\S]*fatal: missing API key\n.*hint: set TEST_KEY/,
      );
      expect(pool.state("broken")).toMatchObject({
        status: "failed",
        starts: 1,
        stderrTail: ["fatal: missing API key", "hint: set TEST_KEY"],
      });
      expect(pool.state("broken").reason).toContain("could not be started");
    } finally {
      await pool.close();
    }
  });
});

describe("ServerPool reaps stubborn children", () => {
  test("a child that never answers initialize and ignores SIGTERM times out and is still killed", async () => {
    const clock = new ManualClock(0);
    const script =
      "process.on('SIGTERM', () => {}); console.error('pid ' + process.pid); setInterval(() => {}, 1000);";
    const config = serverConfig({
      id: "stubborn",
      transport: "stdio",
      command: process.execPath,
      args: ["-e", script],
    });
    const pool = new ServerPool([config], { clock, connectTimeoutMs: 60_000 });
    try {
      const pending = rejection(pool.listTools("stubborn"));
      await expect
        .poll(() => pool.state("stubborn").stderrTail?.[0], { timeout: 10_000 })
        .toMatch(/^pid \d+$/);
      const pid = Number(pool.state("stubborn").stderrTail?.[0]?.slice(4));
      await clock.advance(60_000);
      const error = await pending;
      expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true });
      expect((error as Error).message).toMatch(/did not finish connecting within 60000 ms[\s\S]*pid \d+/);
      await pool.close();
      expect(isAlive(pid)).toBe(false);
    } finally {
      await pool.close();
    }
  });
});
