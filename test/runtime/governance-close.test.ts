/**
 * `createGovernance(...).close()` racing running calls: at every moment a close can come (before the
 * first await, while calls wait in the rate-limit queue, while the server works, after the results),
 * every started call settles with one ledger row holding the code its caller saw, and the stores close
 * only after that. Time is a ManualClock stepped 1 ms at a time, so each timing is reproducible.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { MemoryDownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { isGovernanceError } from "../../src/core/errors.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import type { InvokeRequest } from "../../src/governance/broker/broker-types.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { canListOpenFiles, openFilesUnder } from "./open-files.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-close-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** How long each call keeps the server busy (ms); two run at once, the others queue. */
const DURATIONS = [3, 7, 12, 20, 35, 50, 80, 130];
const GRACE_MS = 25;
/** When close() is called, in clock ms after the calls start; -1 is before the first await. */
const TIMINGS = [
  -1, 0, 1, 2, 3, 4, 5, 7, 9, 12, 15, 19, 23, 27, 32, 40, 50, 60, 75, 90, 110, 130, 160, 200, 260,
];

const manifests = await mkdtemp(join(scratch, "manifests-"));
await writeFile(
  join(manifests, "demo.json"),
  JSON.stringify(
    makeSource({
      tools: [
        makeTool({
          id: "work",
          timeoutMs: 60_000,
          inputSchema: {
            type: "object",
            properties: { query: { type: "string" }, ms: { type: "integer" } },
            required: ["query", "ms"],
          },
        }),
      ],
    }),
  ),
);

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A runtime over an in-memory MCP server whose `work` tool takes `ms` on the clock. */
async function raceRuntime(clock: ManualClock, dataDir: string) {
  const server = { started: 0, cancelled: 0 };
  const demo = () => {
    const mcp = new McpServer({ name: "demo", version: "1.0.0" });
    mcp.registerTool(
      "work",
      { inputSchema: { query: z.string(), ms: z.number().int() } },
      async ({ query, ms }, extra) => {
        server.started++;
        try {
          await clock.sleep(ms, extra.signal);
        } catch (error) {
          server.cancelled++;
          throw error;
        }
        const result = demoResult("work", [query]);
        return {
          content: [{ type: "text", text: JSON.stringify(result) }],
          structuredContent: result as never,
        };
      },
    );
    return mcp;
  };
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [manifests] },
    mcp: { pool: createInMemoryPool({ demo }) },
    storage: { dataDir, contentStore: new MemoryContentStore() },
    clock,
    closeGraceMs: GRACE_MS,
    limits: { rateLimits: { demo: { maxConcurrentRequests: 2 } } },
  });
  return { governance, server };
}

const work = (query: string, ms: number): InvokeRequest => ({
  sourceId: "demo",
  toolId: "work",
  input: { query, ms },
  sessionId: "s1",
});

type Outcome = { invocationId: string | undefined; code: string; message: string; attempts: number };

function settle(promise: Promise<{ invocationId: string; attempts: number }>): Promise<Outcome> {
  return promise.then(
    (ok) => ({ invocationId: ok.invocationId, code: "ok", message: "", attempts: ok.attempts }),
    (error: unknown) => ({
      invocationId: isGovernanceError(error) ? (error.data?.invocationId as string | undefined) : undefined,
      code: isGovernanceError(error) ? error.code : `non-governance: ${String(error)}`,
      message: error instanceof Error ? error.message : String(error),
      attempts: isGovernanceError(error) ? error.attempts : -1,
    }),
  );
}

/**
 * Steps the clock 1 ms at a time until `promise` settles (bounded by 30 s of real time: the ledger's
 * commits take real time, more on a loaded machine).
 */
async function drive(clock: ManualClock, promise: Promise<unknown>): Promise<void> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const deadline = performance.now() + 30_000;
  while (!done && performance.now() < deadline) {
    await flush();
    await clock.advance(1);
  }
  expect(done).toBe(true);
}

interface Tally {
  calls: number;
  rows: number;
  ok: number;
  cancelledInQueue: number;
  cancelledAtServer: number;
  refusedAfterClose: number;
}

/** Starts the calls, closes at `at` ms and checks every call and row; returns what happened. */
async function raceClose(at: number): Promise<Tally> {
  const clock = new ManualClock(Date.parse("2026-01-01T00:00:00Z"));
  const dataDir = await mkdtemp(join(scratch, `t${at}-`));
  const { governance, server } = await raceRuntime(clock, dataDir);
  const calls = DURATIONS.map((ms, i) => settle(governance.broker.invoke(work(`q${i}`, ms))));
  if (at >= 0) {
    await flush();
    for (let ms = 0; ms < at; ms++) {
      await clock.advance(1);
      await flush();
    }
  }
  const closing = governance.close();
  expect(governance.close()).toBe(closing);
  const late = await settle(governance.broker.invoke(work("late", 1)));
  await drive(clock, closing);
  const outcomes = await Promise.all(calls);

  const ledger = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
  const rows = await ledger.query();
  await ledger.close();

  // A call after close() began never started: refused, no row.
  expect(late).toMatchObject({ code: "CANCELLED", invocationId: undefined });
  // Every started call settled, with exactly one row carrying the code and message its caller saw.
  expect(rows).toHaveLength(DURATIONS.length);
  expect(new Set(rows.map((row) => row.invocationId)).size).toBe(DURATIONS.length);
  for (const outcome of outcomes) {
    expect(["ok", "CANCELLED"], `${at} ms: ${outcome.code} ${outcome.message}`).toContain(outcome.code);
    const row = rows.find((r) => r.invocationId === outcome.invocationId);
    expect(row, `${at} ms: row of ${outcome.invocationId}`).toBeDefined();
    expect(row?.error?.code ?? "ok").toBe(outcome.code);
    expect(row?.error?.message ?? "").toBe(outcome.message);
    expect(row?.attempts).toBe(outcome.attempts);
  }
  // Cut calls name close() as the reason; the server saw the MCP cancellation of those it was running.
  const cut = outcomes.filter((o) => o.code === "CANCELLED");
  for (const o of cut) expect(o.message).toMatch(/closed while the call was running/);
  const atServer = cut.filter((o) => o.attempts > 0).length;
  expect(server.cancelled).toBe(atServer);
  expect(server.started).toBe(outcomes.filter((o) => o.code === "ok").length + atServer);
  return {
    calls: outcomes.length,
    rows: rows.length,
    ok: outcomes.filter((o) => o.code === "ok").length,
    cancelledInQueue: cut.length - atServer,
    cancelledAtServer: atServer,
    refusedAfterClose: late.code === "CANCELLED" ? 1 : 0,
  };
}

describe("close() racing running calls", () => {
  const tallies: Array<[number, Tally]> = [];

  test.each(TIMINGS)(
    "close at %i ms: every started call settles with exactly one matching ledger row",
    async (at) => {
      tallies.push([at, await raceClose(at)]);
    },
  );

  test("the sweep reached every phase: calls finished, cut in the queue, cut at the server", () => {
    expect(tallies).toHaveLength(TIMINGS.length);
    const total = (key: keyof Tally) => tallies.reduce((sum, [, t]) => sum + t[key], 0);
    console.log(
      `close() race: ${tallies.length} timings × ${DURATIONS.length} calls = ${total("calls")} calls, ` +
        `${total("rows")} ledger rows; ok ${total("ok")}, CANCELLED in queue ${total("cancelledInQueue")}, ` +
        `CANCELLED at the server ${total("cancelledAtServer")}; ${total("refusedAfterClose")} calls after ` +
        `close() refused with CANCELLED and no row; no other code`,
    );
    expect(total("rows")).toBe(total("calls"));
    expect(total("ok")).toBeGreaterThan(0);
    expect(total("cancelledInQueue")).toBeGreaterThan(0);
    expect(total("cancelledAtServer")).toBeGreaterThan(0);
    // The earliest close still lets the first calls finish within the grace; the latest cuts nothing.
    expect(tallies.at(-1)?.[1].ok).toBe(DURATIONS.length);
  });
});

describe("close()", () => {
  test("a second call shares the first; the stores are closed afterwards", async () => {
    const clock = new ManualClock(0);
    const { governance } = await raceRuntime(clock, await mkdtemp(join(scratch, "twice-")));
    const first = governance.close();
    expect(governance.close()).toBe(first);
    await first;
    await expect(governance.ledger.query()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    await expect(governance.close()).resolves.toBeUndefined();
  });

  test.skipIf(!canListOpenFiles)(
    "a close that throws leaves nothing else open; several failures come back as one AggregateError",
    async () => {
      const dataDir = await mkdtemp(join(scratch, "failing-close-"));
      const inner = createInMemoryPool({});
      const pool: ToolServerPool = {
        ...inner,
        close: async () => {
          await inner.close();
          throw new Error("the pool's transport failed to close");
        },
      };
      class FailingJobStore extends MemoryDownloadJobStore {
        override async close(): Promise<void> {
          await super.close();
          throw new Error("the job store failed to close");
        }
      }
      const governance = await createGovernance({
        config: { servers: [] },
        manifests: { builtin: false },
        storage: { dataDir, jobStore: new FailingJobStore() },
        mcp: { pool },
      });
      expect(openFilesUnder(dataDir).length).toBeGreaterThan(0);
      const error = await governance.close().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AggregateError);
      expect((error as AggregateError).errors.map((e: Error) => e.message)).toEqual([
        "the pool's transport failed to close",
        "the job store failed to close",
      ]);
      // The ledger and the grants, closed after the failing pool, are closed all the same.
      expect(openFilesUnder(dataDir)).toEqual([]);
      await expect(governance.ledger.query()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    },
  );

  test("with nothing running it needs no clock: it does not wait for the grace period", async () => {
    const clock = new ManualClock(0);
    const { governance } = await raceRuntime(clock, await mkdtemp(join(scratch, "idle-")));
    const call = governance.broker.invoke(work("done", 5));
    await drive(clock, call);
    expect((await call).result.records).toHaveLength(1);
    // The clock is not advanced any more: close() would hang if it waited for the grace period.
    await governance.close();
    expect(clock.pendingTimers).toBe(0);
  });
});
