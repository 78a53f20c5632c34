/**
 * One replica for `governance-replicas.replicas.test.ts`: `createGovernance` on the shared PostgreSQL
 * database (ledger, grants, session state and rate limits there), the test's manifests folder, and
 * the source's MCP server in this process (a real `McpServer` behind the in-memory pool) whose one
 * tool makes one HTTP request to the test's fake provider. It prints `ready`, waits for `go` on
 * stdin, then starts call k at k × spacing through `governance.broker.invoke`, which settles once
 * the call's row is written. One JSON line per call on stdout:
 * `{call, outcome, invocationId, elapsedMs, ...}` with `ok` or the error code (`elapsedMs`: until
 * `invoke` settled).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { isGovernanceError } from "../../../src/core/index.js";
import type { RateLimitGroupConfig } from "../../../src/governance/rate-limit/index.js";
import { createGovernance } from "../../../src/runtime/index.js";
import { createInMemoryPool } from "../../../src/testing/in-memory-pool.js";
import { demoResult } from "../../governance/broker/broker-harness.js";

interface ReplicaPlan {
  url: string;
  providerUrl: string;
  manifests: string;
  dataDir: string;
  replica: string;
  calls: number;
  spacingMs: number;
  leaseTtlMs: number;
  group: RateLimitGroupConfig;
}

const plan = JSON.parse(process.argv[2]!) as ReplicaPlan;

/** The source's server: `search({replica, call})` is one request to the provider. */
function providerServer(): McpServer {
  const mcp = new McpServer({ name: "demo", version: "1.0.0" });
  mcp.registerTool(
    "search",
    { inputSchema: { replica: z.string(), call: z.number().int() } },
    async ({ replica, call }) => {
      const response = await fetch(
        `${plan.providerUrl}/call?replica=${encodeURIComponent(replica)}&call=${call}`,
      );
      await response.text();
      if (!response.ok) throw new Error(`the provider answered HTTP ${response.status}`);
      const result = demoResult("search", [`${replica}-${call}`]);
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result as never,
      };
    },
  );
  return mcp;
}

const governance = await createGovernance({
  config: { servers: [] },
  manifests: { builtin: false, dirs: [plan.manifests] },
  mcp: { pool: createInMemoryPool({ demo: providerServer }) },
  env: {},
  storage: {
    postgres: plan.url,
    maxConnections: 4,
    rateLimitLeaseTtlMs: plan.leaseTtlMs,
    dataDir: plan.dataDir,
  },
  limits: { rateLimits: { demo: plan.group } },
});
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
say({ ready: true });
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));

async function call(k: number): Promise<void> {
  const startedAt = performance.now();
  try {
    const outcome = await governance.broker.invoke({
      sourceId: "demo",
      toolId: "search",
      input: { replica: plan.replica, call: k },
      sessionId: `thread-${plan.replica}`,
      threadId: `thread-${plan.replica}`,
      toolCallId: `call-${k}`,
    });
    const elapsedMs = performance.now() - startedAt;
    say({
      call: k,
      outcome: "ok",
      invocationId: outcome.invocationId,
      attempts: outcome.attempts,
      cacheHit: outcome.cacheHit,
      queueWaitMs: outcome.queueWaitMs,
      elapsedMs,
    });
  } catch (error) {
    const elapsedMs = performance.now() - startedAt;
    if (!isGovernanceError(error)) {
      say({ call: k, outcome: String(error), governanceError: false });
      return;
    }
    say({
      call: k,
      outcome: error.code,
      governanceError: true,
      name: error.name,
      retryable: error.retryable,
      attempts: error.attempts,
      invocationId: error.data?.invocationId,
      elapsedMs,
    });
  }
}

const started = performance.now();
const runs: Promise<void>[] = [];
for (let k = 0; k < plan.calls; k++) {
  const due = started + k * plan.spacingMs;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  runs.push(call(k));
}
await Promise.all(runs);
await governance.close();
say({ done: true });
process.exit(0);
