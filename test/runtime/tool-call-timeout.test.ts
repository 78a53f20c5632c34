/**
 * `tool_call_timeout` in `extensions_config.json` is the deadline of that server's calls: a server that
 * never answers ends in TIMEOUT at the configured time, not at a manifest's or the derived 60 s. The
 * servers are in-process and time is a ManualClock, so the moment of the TIMEOUT is exact.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { isGovernanceError } from "../../src/core/errors.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-tool-timeout-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** The `demo` source has a manifest whose tool allows 60 s; `plain` has none (derived: 60 s). */
const manifests = await mkdtemp(join(scratch, "manifests-"));
await writeFile(
  join(manifests, "demo.json"),
  JSON.stringify(makeSource({ tools: [makeTool({ id: "hang", timeoutMs: 60_000 })] })),
);

/** A server whose `hang` tool answers only when the request is cancelled. */
function hangingServer(cancelled: { count: number }): () => McpServer {
  return () => {
    const server = new McpServer({ name: "hanging", version: "1.0.0" });
    server.registerTool(
      "hang",
      { inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
      (_args, extra) =>
        new Promise((resolve) => {
          extra.signal.addEventListener("abort", () => {
            cancelled.count++;
            resolve({ content: [{ type: "text", text: "late" }] });
          });
        }),
    );
    return server;
  };
}

async function runtime(toolCallTimeout: number | undefined) {
  const clock = new ManualClock(0);
  const ledger = new MemoryLedger();
  const cancelled = { count: 0 };
  const timeout = toolCallTimeout === undefined ? {} : { tool_call_timeout: toolCallTimeout };
  const governance = await createGovernance({
    config: {
      mcpServers: {
        demo: { command: "node", ...timeout },
        plain: { command: "node", ...timeout },
      },
    },
    manifests: { builtin: false, dirs: [manifests] },
    mcp: { pool: createInMemoryPool({ demo: hangingServer(cancelled), plain: hangingServer(cancelled) }) },
    storage: { ledger, contentStore: new MemoryContentStore() },
    clock,
    permissions: { enforce: false },
  });
  return { governance, clock, ledger, cancelled };
}

/** Moves the clock 100 ms at a time until `promise` settles; returns its code and the clock time. */
async function settleAt(
  clock: ManualClock,
  promise: Promise<unknown>,
): Promise<{ code: string; at: number }> {
  let outcome: string | undefined;
  promise.then(
    () => {
      outcome = "resolved";
    },
    (error: unknown) => {
      outcome = isGovernanceError(error) ? error.code : `non-governance: ${String(error)}`;
    },
  );
  for (let i = 0; i < 2_000 && outcome === undefined; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(100);
  }
  await new Promise((resolve) => setImmediate(resolve));
  return { code: outcome ?? "pending", at: clock.now() };
}

describe("tool_call_timeout", () => {
  test.each([
    ["a source with a manifest (timeoutMs 60 s)", "demo", "hang"],
    ["a server without a manifest (derived, 60 s)", "plain", "hang"],
  ])("ends a call of %s in TIMEOUT at the configured 10 s", async (_label, sourceId, toolId) => {
    const { governance, clock, ledger, cancelled } = await runtime(10);
    try {
      const call = governance.broker.invoke({ sourceId, toolId, input: { query: "x" }, sessionId: "s1" });
      const { code, at } = await settleAt(clock, call);
      expect(code).toBe("TIMEOUT");
      expect(at).toBeGreaterThanOrEqual(10_000);
      expect(at).toBeLessThan(11_000);
      const [row] = await ledger.query({});
      expect(row?.status).toBe("error");
      expect(row?.error?.code).toBe("TIMEOUT");
      expect(cancelled.count).toBe(1);
    } finally {
      await governance.close();
    }
  });

  test("without it the manifest's deadline holds", async () => {
    const { governance, clock } = await runtime(undefined);
    try {
      const call = governance.broker.invoke({
        sourceId: "demo",
        toolId: "hang",
        input: { query: "x" },
        sessionId: "s1",
      });
      const { code, at } = await settleAt(clock, call);
      expect(code).toBe("TIMEOUT");
      expect(at).toBeGreaterThanOrEqual(60_000);
      expect(at).toBeLessThan(61_000);
    } finally {
      await governance.close();
    }
  });

  test("a request's own timeoutMs wins over it", async () => {
    const { governance, clock } = await runtime(10);
    try {
      const call = governance.broker.invoke({
        sourceId: "plain",
        toolId: "hang",
        input: { query: "x" },
        sessionId: "s1",
        timeoutMs: 3_000,
      });
      const { code, at } = await settleAt(clock, call);
      expect(code).toBe("TIMEOUT");
      expect(at).toBeGreaterThanOrEqual(3_000);
      expect(at).toBeLessThan(4_000);
    } finally {
      await governance.close();
    }
  });
});
