/**
 * "Returned" means "recorded", on every backend: a governed call through `createGovernance` ends with
 * exactly one row, readable the moment the call returns (evidence review right after a call finds it),
 * whatever text the call carries. A hostile server's error text, a dangerous tool that writes and then
 * fails, session, thread and tool call ids and a refused tool name may all hold NUL characters; the row
 * keeps each exactly, and the console searches for a NUL without failing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { reviewEvidence } from "../../src/artifacts/review-evidence.js";
import { type ConsoleServer, serveConsole } from "../../src/console/index.js";
import { isGovernanceError } from "../../src/core/errors.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { createAuthorizationRequest } from "../../src/governance/permissions/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { mergeGovernanceOptions } from "../../src/runtime/index.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { useTestSchemas } from "../postgres/fresh-schema.js";

const NUL = "\u0000";
const scratch = mkdtempSync(join(tmpdir(), "sciencegate-recorded-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const schemas = useTestSchemas();

/** A server whose errors carry NUL characters, and whose `write` has a side effect before it fails. */
function hostileServer(effects: string[]): McpServer {
  const server = new McpServer({ name: "hostile", version: "1.0.0" });
  const input = { query: z.string() };
  server.registerTool("search", { inputSchema: input }, async ({ query }) => {
    const result = demoResult("search", [query.replace(/\W/g, "") || "x"], { sourceId: "hostile" });
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result as never };
  });
  server.registerTool("broken", { inputSchema: input }, async () => ({
    content: [{ type: "text", text: `upstream said${NUL}and then stopped` }],
    isError: true,
  }));
  server.registerTool("write", { inputSchema: input }, async ({ query }) => {
    effects.push(query);
    return { content: [{ type: "text", text: `wrote ${query}, then${NUL}failed` }], isError: true };
  });
  return server;
}

async function runtime(
  storage: Partial<GovernanceOptions>,
): Promise<{ governance: Governance; effects: string[] }> {
  const dir = mkdtempSync(join(scratch, "run-"));
  const plain = (id: string) => makeTool({ id, routing: { keywords: [], mode: "off", priority: 0 } });
  const write = makeTool({
    id: "write",
    readOnly: false,
    permission: {
      action: "hostile:write",
      resourceTemplate: "hostile:write:{query}",
      summaryTemplate: "write",
    },
    routing: { keywords: [], mode: "off", priority: 0 },
  });
  writeFileSync(
    join(dir, "hostile.json"),
    JSON.stringify(makeSource({ id: "hostile", tools: [plain("search"), plain("broken"), write] })),
  );
  const effects: string[] = [];
  const governance = await createGovernance(
    mergeGovernanceOptions(
      {
        config: { servers: [] },
        manifests: { builtin: false, dirs: [dir] },
        mcp: { pool: createInMemoryPool({ hostile: () => hostileServer(effects) }) },
        storage: { dataDir: join(dir, "data"), contentStore: new MemoryContentStore() },
        env: {},
      },
      storage,
    ),
  );
  return { governance, effects };
}

describe.each([
  ["SQLite", async () => ({})],
  ["PostgreSQL", async () => ({ storage: { postgres: await schemas.next() } })],
])("every governed call is recorded when it returns, on %s", (backend, storage) => {
  let governance: Governance;
  let effects: string[];
  let console: ConsoleServer;
  beforeAll(async () => {
    ({ governance, effects } = await runtime(await storage()));
    console = await serveConsole({ governance, port: 0 });
  }, 60_000);
  afterAll(async () => {
    await console?.close();
    await governance?.close();
  });

  /** The call's outcome as a code (`ok` or the error code), and the invocation id it names. */
  const outcomeOf = async (call: Promise<{ invocationId: string }>) =>
    call.then(
      (outcome) => ({ code: "ok", invocationId: outcome.invocationId, message: "" }),
      (error: unknown) => {
        if (!isGovernanceError(error)) throw error;
        return {
          code: error.code as string,
          invocationId: String(error.data?.invocationId),
          message: error.message,
        };
      },
    );

  test("evidence review right after each call finds its row: 50 of 50", async () => {
    for (let i = 0; i < 50; i++) {
      const outcome = await governance.broker.invoke({
        sourceId: "hostile",
        toolId: "search",
        input: { query: `q${i}` },
        sessionId: "s-review",
      });
      const review = await reviewEvidence({
        governance,
        claims: [{ text: `claim ${i}`, evidence: [{ mcpInvocationId: outcome.invocationId }] }],
      });
      expect(review.claims[0]?.evidence[0]?.reason, `call ${i} on ${backend}`).not.toBe("not_governed");
      expect(review.accepted, `call ${i} on ${backend}: ${JSON.stringify(review.claims[0]?.evidence)}`).toBe(
        true,
      );
    }
  });

  test("a server's error text with a NUL: one row, the text kept exactly", async () => {
    const outcome = await outcomeOf(
      governance.broker.invoke({
        sourceId: "hostile",
        toolId: "broken",
        input: { query: "x" },
        sessionId: "s-nul",
      }),
    );
    expect(outcome.code).toBe("TOOL_FAILED");
    expect(outcome.message).toContain(`said${NUL}and`);
    const row = await governance.ledger.get(outcome.invocationId);
    expect(row).toMatchObject({ status: "error", error: { code: "TOOL_FAILED", message: outcome.message } });
  });

  test("a dangerous tool that writes, then fails with a NUL: its decision and its row are both recorded", async () => {
    const call = {
      sourceId: "hostile",
      toolId: "write",
      input: { query: `file${NUL}name` },
      sessionId: "s-write",
      threadId: "t-write",
      toolCallId: "call-write",
    };
    const request = createAuthorizationRequest(governance.catalog, call);
    const { authorizationId } = await governance.permissions.decide(request, { decision: "allow_once" });
    const outcome = await outcomeOf(governance.broker.invoke(call));
    expect(effects).toEqual([`file${NUL}name`]);
    expect(outcome.code).toBe("TOOL_FAILED");
    const row = await governance.ledger.findByCall("t-write", "call-write");
    expect(row).toMatchObject({ invocationId: outcome.invocationId, authorizationId, status: "error" });
    expect(row?.error?.message).toContain(`then${NUL}failed`);
    expect(await governance.ledger.getAuthorization(authorizationId)).toMatchObject({
      decisionSource: "user_once",
      toolCallId: "call-write",
    });
  });

  test("session, thread and tool call ids with NUL characters: exactly one row, its ids exact, its status the answer's", async () => {
    const ids = { sessionId: `s${NUL}1`, threadId: `t${NUL}1`, toolCallId: `c${NUL}1` };
    const outcome = await outcomeOf(
      governance.broker.invoke({ sourceId: "hostile", toolId: "search", input: { query: "nul" }, ...ids }),
    );
    const row = await governance.ledger.findByCall(ids.threadId, ids.toolCallId);
    expect(row).toMatchObject({ invocationId: outcome.invocationId, sessionId: ids.sessionId });
    expect(row?.status === "ok" ? "ok" : row?.error?.code).toBe(outcome.code);
    expect(await governance.ledger.query({ sessionId: ids.sessionId })).toHaveLength(1);
  });

  test("a refused tool name with a NUL (an MCP client's tools/call) is recorded exactly", async () => {
    const toolId = `no${NUL}such`;
    await governance.broker.recordRefusal(
      {
        sourceId: "hostile",
        toolId,
        input: {},
        sessionId: "s-refused",
        threadId: "t-refused",
        toolCallId: "c-1",
      },
      { code: "TOOL_UNAVAILABLE", message: `Unknown tool ${toolId}.`, retryable: false, attempts: 0 },
    );
    const row = await governance.ledger.findByCall("t-refused", "c-1");
    expect(row).toMatchObject({
      toolId,
      error: { code: "TOOL_UNAVAILABLE", message: `Unknown tool ${toolId}.` },
    });
  });

  test("the console searches for a NUL (?q=%00) and lists the rows that hold one", async () => {
    const response = await fetch(`${console.url}/invocations?q=%00`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain("TOOL_FAILED");
    expect(page).not.toContain("s-review");
  });
});
