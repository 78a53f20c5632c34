/**
 * The rig of the broker-level fault tests: the real Broker, RateLimiter (built from the manifest, as
 * `createGovernance` does), SourceCatalog and MCP SDK server over the in-memory transport, with tools
 * that misbehave as each test tells them; time is a ManualClock.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect } from "vitest";
import { type ZodRawShape, z } from "zod";
import type { McpToolResult } from "../../src/contract/result-types.js";
import { type GovernanceError, isGovernanceError } from "../../src/core/errors.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { Broker } from "../../src/governance/broker/broker.js";
import type { InvokeOutcome } from "../../src/governance/broker/broker-types.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import type { SourceManifestInput } from "../../src/governance/manifests/manifest-schema.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import { RateLimiter } from "../../src/governance/rate-limit/rate-limiter.js";
import { type LedgerUnderTest, ledgerUnderTest } from "../../src/testing/conformance/ledger-under-test.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { makeSource, makeTool, type ToolInput } from "../governance/manifests/manifest-factory.js";

/** What a tool of the rig's server does with its (server-validated) arguments. */
export type Handler = (args: Record<string, unknown>) => Promise<CallToolResult> | CallToolResult;

/** A tool with its own schemas: the manifest's JSON Schema (what the broker checks) and the server's. */
export interface ToolSpec {
  handler: Handler;
  inputSchema: ToolInput["inputSchema"];
  serverShape: ZodRawShape;
}

/** The rig: the broker and what tests look at. */
export interface Rig {
  broker: Broker;
  ledger: LedgerUnderTest;
  store: MemoryContentStore;
  limiter: RateLimiter;
  catalog: SourceCatalog;
  clock: ManualClock;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * A broker over one in-memory server for the `demo` source (cache off, so every call reaches the
 * server). Tools given as a bare handler take `{query: string, limit?: integer}`.
 * @param tools tool id -> handler or full spec
 * @param governance overrides of the source's governance block (limits, cap)
 * @param clock the broker's and limiter's clock (handlers may sleep on it too)
 */
export async function rig(
  tools: Record<string, Handler | ToolSpec>,
  governance: Partial<SourceManifestInput["governance"]> = {},
  clock = new ManualClock(0),
): Promise<Rig> {
  const specs = Object.entries(tools).map(([id, tool]) => ({
    id,
    spec:
      typeof tool === "function" ? { handler: tool, inputSchema: undefined, serverShape: undefined } : tool,
  }));
  const base = makeSource();
  const registry = new SourceRegistry();
  registry.register(
    makeSource({
      cache: { enabled: false, ttlSeconds: 0 },
      governance: { ...base.governance, ...governance },
      tools: specs.map(({ id, spec }) =>
        makeTool({ id, ...(spec.inputSchema ? { inputSchema: spec.inputSchema } : {}) }),
      ),
    }),
  );
  const server = () => {
    const s = new McpServer({ name: "demo", version: "1.0.0" });
    for (const { id, spec } of specs) {
      const shape = spec.serverShape ?? { query: z.string(), limit: z.number().int().optional() };
      s.registerTool(id, { inputSchema: shape }, (args: Record<string, unknown>) => spec.handler(args));
    }
    return s;
  };
  const pool = createInMemoryPool({ demo: server });
  const catalog = new SourceCatalog({ registry, pool });
  await catalog.refresh();
  const ledger = ledgerUnderTest(new MemoryLedger());
  const store = new MemoryContentStore();
  const limiter = new RateLimiter({ clock, groups: registry.rateLimitGroups() });
  const broker = new Broker({
    catalog,
    pool,
    ledgerWriter: ledger.writer,
    store,
    limiter,
    clock,
    random: () => 0.5,
  });
  closers.push(async () => {
    await pool.close();
    await ledger.close();
  });
  return { broker, ledger, store, limiter, catalog, clock };
}

/**
 * A successful tool result carrying `result` both as JSON text and as `structuredContent`.
 * @param result the result object
 */
export function ok(result: McpToolResult | Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(result) }],
    structuredContent: result as Record<string, unknown>,
  };
}

/** How an invocation ended: a result, a structured error, or anything else (a crash). */
export type Settled = { ok: InvokeOutcome } | { error: GovernanceError } | { crash: unknown };

/**
 * Settles an invocation without throwing.
 * @param promise the invocation
 */
export function settle(promise: Promise<InvokeOutcome>): Promise<Settled> {
  return promise.then(
    (outcome) => ({ ok: outcome }),
    (error: unknown) => (isGovernanceError(error) ? { error } : { crash: error }),
  );
}

/**
 * @param settled an outcome
 * @returns "ok", the error code, or "crash: ..." for anything that is not a GovernanceError
 */
export function codeOf(settled: Settled): string {
  if ("ok" in settled) return "ok";
  if ("error" in settled) return settled.error.code;
  return `crash: ${String(settled.crash)}`;
}

/** Lets I/O callbacks (the in-memory transport) run. */
export const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Lets I/O run and moves the clock in steps until every promise settled.
 * @param clock the rig's clock
 * @param promises what must settle
 * @param stepMs how far each step moves the clock
 */
export async function driveAll(clock: ManualClock, promises: Promise<unknown>[], stepMs = 50): Promise<void> {
  let pending = promises.length;
  for (const p of promises) p.then(() => pending--);
  for (let i = 0; i < 10_000 && pending > 0; i++) {
    await macrotask();
    if (pending > 0) await clock.advance(stepMs);
  }
  expect(pending, "invocations still pending after the clock ran").toBe(0);
}

/**
 * A request to the `demo` source.
 * @param toolId the tool
 * @param input the arguments (a `{query}` object when a string is given)
 */
export function call(toolId: string, input: unknown) {
  return {
    sourceId: "demo",
    toolId,
    input: typeof input === "string" ? { query: input } : input,
    sessionId: "s1",
  };
}
