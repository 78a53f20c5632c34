/**
 * A governance runtime for graph tests whose demo server can be steered: `slow` calls wait at a gate
 * the test opens, and a tool's live description can be changed (a new definition hash).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

/** The steerable runtime. */
export interface GraphTestRuntime {
  governance: Governance;
  /** Calls per MCP tool name. */
  calls: Record<string, number>;
  /** Queries of `slow` calls in the order they finished. */
  finished: string[];
  /** Resolves once `count` `slow` calls are waiting at their gates. */
  waitingSlowCalls(count: number): Promise<void>;
  /** Lets the `slow` call for `query` finish. */
  release(query: string): void;
  /** Changes a tool's live description and waits for the catalog to see it. */
  changeDescription(tool: string, description: string): Promise<void>;
}

/**
 * Builds a runtime with source `demo`: `search` (keyword "demo", prefer 60), `lookup` (keyword
 * "lookup", prefer 40) and `slow` (no routing), served by one in-memory MCP server.
 */
export async function createGraphTestRuntime(): Promise<GraphTestRuntime> {
  const calls: Record<string, number> = {};
  const finished: string[] = [];
  const gates = new Map<string, () => void>();
  const opened = new Set<string>();
  let waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = new McpServer({ name: "demo", version: "1.0.0" });
  const registered = new Map<string, RegisteredTool>();
  const inputSchema = { query: z.string(), limit: z.number().int().optional() };
  const respond = (name: string, query: string) => {
    const result = demoResult(name, [query.replace(/\W/g, "") || "x"]);
    return {
      content: [{ type: "text" as const, text: JSON.stringify(result) }],
      structuredContent: result as never,
    };
  };
  for (const name of ["search", "lookup"]) {
    const tool = server.registerTool(
      name,
      { description: `The ${name} tool.`, inputSchema },
      async ({ query }) => {
        calls[name] = (calls[name] ?? 0) + 1;
        return respond(name, query);
      },
    );
    registered.set(name, tool);
  }
  server.registerTool("slow", { description: "The slow tool.", inputSchema }, async ({ query }) => {
    calls.slow = (calls.slow ?? 0) + 1;
    if (!opened.has(query)) {
      const gate = new Promise<void>((resolve) => gates.set(query, resolve));
      const waiting = gates.size;
      for (const waiter of waiters.filter((w) => w.count <= waiting)) waiter.resolve();
      waiters = waiters.filter((w) => w.count > waiting);
      await gate;
    }
    finished.push(query);
    return respond("slow", query);
  });
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-graph-"));
  const manifest = makeSource({
    tools: [
      makeTool({ id: "search", routing: { keywords: ["demo"], mode: "prefer", priority: 60 } }),
      makeTool({
        id: "lookup",
        kind: "lookup",
        routing: { keywords: ["lookup"], mode: "prefer", priority: 40 },
      }),
      makeTool({ id: "slow", routing: { keywords: [], mode: "off", priority: 0 } }),
    ],
  });
  writeFileSync(join(dir, "demo.json"), JSON.stringify(manifest));
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [dir] },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
  });
  return {
    governance,
    calls,
    finished,
    waitingSlowCalls: (count) =>
      gates.size >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    release(query) {
      opened.add(query);
      gates.get(query)?.();
    },
    async changeDescription(tool, description) {
      registered.get(tool)?.update({ description });
      await governance.refresh();
    },
  };
}
