/** A `createGovernance` runtime over the demo MCP server of the broker tests, in memory. */

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

/** Counters of the demo server. */
export interface DemoCounters {
  calls: Record<string, number>;
}

/**
 * A governance runtime with one source `demo` (tools `search`, `lookup`) served in memory.
 * @returns the runtime and the server's call counters
 */
export async function createDemoGovernance(): Promise<{ governance: Governance; counters: DemoCounters }> {
  const counters: DemoCounters = { calls: {} };
  const server = () => {
    const s = new McpServer({ name: "demo", version: "1.0.0" });
    for (const name of ["search", "lookup"]) {
      s.registerTool(
        name,
        { inputSchema: { query: z.string(), limit: z.number().int().optional() } },
        async ({ query }) => {
          counters.calls[name] = (counters.calls[name] ?? 0) + 1;
          const result = demoResult(name, [query.replace(/\W/g, "") || "x"]);
          return {
            content: [{ type: "text", text: JSON.stringify(result) }],
            structuredContent: result as never,
          };
        },
      );
    }
    return s;
  };
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-nodes-"));
  writeFileSync(
    join(dir, "demo.json"),
    JSON.stringify(
      makeSource({
        tools: [
          makeTool({ id: "search", routing: { keywords: ["demo"], mode: "prefer", priority: 60 } }),
          makeTool({
            id: "lookup",
            kind: "lookup",
            routing: { keywords: ["lookup"], mode: "prefer", priority: 40 },
          }),
        ],
      }),
    ),
  );
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [dir] },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
  });
  return { governance, counters };
}
