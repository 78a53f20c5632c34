import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import type { ApprovalRequest } from "../../src/nodes/index.js";
import { connectClient, createLab, type GatewayClient, type Lab } from "./gateway-harness.js";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.governance.close();
  gateway = undefined;
  lab = undefined;
});

async function setup(options: Omit<Parameters<typeof createGatewayServer>[0], "governance"> = {}) {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, ...options });
  return { lab, gateway };
}

async function call(
  client: GatewayClient,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === "text" ? first.text : "";
}

// The lab source offers no download (no artifact-plan tool): no artifact built-ins beside tool_search.
const BUILTINS = ["tool_search"];

describe("createGatewayServer: the tool list", () => {
  test("lists tool_search and the built-ins, not the deferred tools; the instructions name them and say how to load them", async () => {
    const { gateway } = await setup();
    const a = await connectClient(gateway);
    const { tools } = await a.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(BUILTINS);
    expect(tools[0]).toMatchObject({
      annotations: { readOnlyHint: true },
      inputSchema: { type: "object", properties: { query: { type: "string" } } },
    });
    const instructions = a.client.getInstructions() ?? "";
    expect(instructions).toContain("<available-deferred-tools>");
    expect(instructions).toContain("mcp__lab__search");
    expect(instructions).toContain("notifications/tools/list_changed");
    // The keyword hints stand in for auto-promotion from the user's message.
    expect(instructions).toContain("- lab -> mcp__lab__search");
    expect(a.session.sessionId).toMatch(/^gateway:[0-9a-f-]{36}$/);
  });

  test("tool_search promotes: list_changed arrives once, and the re-list shows the tool with its schema and hints", async () => {
    const { gateway } = await setup();
    const a = await connectClient(gateway);
    const found = await call(a, "tool_search", { query: "select:mcp__lab__search" });
    expect(found.isError).toBeUndefined();
    expect(found.structuredContent).toMatchObject({ results: [{ name: "mcp__lab__search" }] });
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    const { tools } = await a.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...BUILTINS, "mcp__lab__search"]);
    expect(tools.at(-1)).toMatchObject({
      description: expect.stringContaining("Source: Demo lab"),
      inputSchema: { type: "object", required: ["query"] },
      annotations: { readOnlyHint: true },
    });
    // Loading what is loaded already changes nothing, so nothing is announced.
    await call(a, "tool_search", { query: "select:mcp__lab__search" });
    await a.client.ping();
    expect(a.listChanged()).toBe(1);
  });

  test("eager lists every allowed tool up front; tools the server does not offer stay out", async () => {
    const { gateway } = await setup({ eager: true });
    const a = await connectClient(gateway);
    expect(await a.toolNames()).toEqual([
      ...BUILTINS,
      "mcp__lab__search",
      "mcp__lab__lookup",
      "mcp__lab__write",
      "mcp__lab__slow",
    ]);
    const write = (await a.client.listTools()).tools.find((t) => t.name === "mcp__lab__write");
    expect(write?.annotations).toEqual({ readOnlyHint: false });
    expect(a.client.getInstructions()).not.toContain("<available-deferred-tools>");
    expect((await call(a, "mcp__lab__lookup", { query: "p38" })).isError).toBeUndefined();
  });
});

describe("createGatewayServer: calls go through the broker", () => {
  test("a promoted tool runs once through the broker: citations in the text and the structured result, one ledger row for the session", async () => {
    const { lab, gateway } = await setup();
    const a = await connectClient(gateway);
    await call(a, "tool_search", { query: "select:mcp__lab__search" });
    const result = await call(a, "mcp__lab__search", { query: "brca1" });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toMatch(/^mcpInvocationId: [0-9a-f-]{36}\n/);
    expect(textOf(result)).toContain("[1] [demo:brca1](https://example.org/r/brca1) Record brca1");
    expect(result.structuredContent).toMatchObject({
      mcpInvocationId: expect.any(String),
      sourceId: "lab",
      toolId: "search",
      untrusted: true,
      records: [{ contentScope: "metadata", primaryCitation: { url: "https://example.org/r/brca1" } }],
    });
    expect(lab.calls.search).toBe(1);
    const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      invocationId: result.structuredContent?.mcpInvocationId,
      sessionId: a.session.sessionId,
      threadId: a.session.sessionId,
      sourceId: "lab",
      toolId: "search",
      status: "ok",
    });
  });

  test("each request is a new call: the same arguments twice are two rows (the second a cache hit), with two tool call ids", async () => {
    const { lab, gateway } = await setup({ eager: true });
    const a = await connectClient(gateway);
    await call(a, "mcp__lab__search", { query: "tp53" });
    await call(a, "mcp__lab__search", { query: "tp53" });
    const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId });
    expect(rows.map((r) => r.cacheHit).sort()).toEqual([false, true]);
    expect(new Set(rows.map((r) => r.toolCallId)).size).toBe(2);
    expect(lab.calls.search).toBe(1);
  });

  test.each([
    ["invalid arguments", "mcp__lab__search", { query: 5 }, "INVALID_INPUT", false],
    ["a dangerous call nobody approved", "mcp__lab__write", { query: "x" }, "PERMISSION_DENIED", false],
    ["a deferred tool not loaded yet", "mcp__lab__lookup", { query: "x" }, "TOOL_UNAVAILABLE", true],
  ])(
    "%s is a tool error with the governance code, audited, and nothing runs upstream",
    async (_name, tool, args, code, retryable) => {
      const { lab, gateway } = await setup();
      const a = await connectClient(gateway);
      await call(a, "tool_search", { query: "select:mcp__lab__search,mcp__lab__write" });
      const result = await call(a, tool, args);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ code, retryable, message: expect.any(String) });
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      expect(lab.calls).toEqual({});
      const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId });
      expect(rows).toMatchObject([{ status: "error", error: { code } }]);
    },
  );

  test("an unknown tool is a JSON-RPC -32602 error (not a result), audited, and nothing runs upstream", async () => {
    const { lab, gateway } = await setup();
    const a = await connectClient(gateway);
    const failure = await a.client
      .callTool({ name: "mcp__lab__nope", arguments: {} })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: -32602 });
    expect(lab.calls).toEqual({});
    const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId });
    expect(rows).toMatchObject([{ status: "error", error: { code: "TOOL_UNAVAILABLE" } }]);
  });

  test("cancelling an in-flight call aborts it upstream and leaves one CANCELLED row", async () => {
    const { lab, gateway } = await setup({ eager: true });
    const a = await connectClient(gateway);
    const controller = new AbortController();
    const running = a.client.callTool({ name: "mcp__lab__slow", arguments: { query: "x" } }, undefined, {
      signal: controller.signal,
    });
    await lab.slowStarted;
    controller.abort("the user stopped it");
    await expect(running).rejects.toThrow();
    await lab.slowAborted;
    await vi.waitFor(async () => {
      const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId });
      expect(rows).toMatchObject([{ toolId: "slow", status: "error", error: { code: "CANCELLED" } }]);
    });
  });

  test("an approval hook sees the call and its session; a denial is PERMISSION_DENIED with its reason, audited", async () => {
    const asked: ApprovalRequest[] = [];
    const sessions: string[] = [];
    const { lab, gateway } = await setup({
      eager: true,
      approval: (request, context) => {
        asked.push(request);
        sessions.push(context.session.sessionId);
        expect(context.request.signal.aborted).toBe(false);
        return request.tool.readOnly ? undefined : { allowed: false, reason: "writes need a person" };
      },
    });
    const a = await connectClient(gateway);
    expect((await call(a, "mcp__lab__lookup", { query: "x" })).isError).toBeUndefined();
    const denied = await call(a, "mcp__lab__write", { query: "x" });
    expect(denied.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("writes need a person"),
    });
    expect(asked.map((r) => r.name)).toEqual(["mcp__lab__lookup", "mcp__lab__write"]);
    expect(sessions).toEqual([a.session.sessionId, a.session.sessionId]);
    expect(lab.calls).toEqual({ lookup: 1 });
    const rows = await lab.governance.ledger.query({ sessionId: a.session.sessionId, toolId: "write" });
    expect(rows).toMatchObject([{ status: "error", error: { code: "PERMISSION_DENIED" } }]);
  });
});

describe("createGatewayServer: sessions", () => {
  test("two concurrent sessions see neither each other's promotions nor each other's approval mode", async () => {
    const { lab, gateway } = await setup();
    const [a, b] = await Promise.all([connectClient(gateway), connectClient(gateway)]);
    expect(a.session.sessionId).not.toBe(b.session.sessionId);
    await call(a, "tool_search", { query: "select:mcp__lab__search,mcp__lab__write" });
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    expect(await a.toolNames()).toContain("mcp__lab__search");
    expect(await b.toolNames()).toEqual(BUILTINS);
    expect(b.listChanged()).toBe(0);
    expect((await call(b, "mcp__lab__search", { query: "x" })).structuredContent).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      data: { reason: "not_promoted" },
    });

    await lab.governance.permissions.setApprovalMode(a.session.sessionId, "always_allow");
    await call(b, "tool_search", { query: "select:mcp__lab__write" });
    expect((await call(a, "mcp__lab__write", { query: "x" })).isError).toBeUndefined();
    expect((await call(b, "mcp__lab__write", { query: "x" })).structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(lab.calls.write).toBe(1);
  });

  test("a given session id is used as it is; a blank one counts as absent", async () => {
    const { gateway } = await setup();
    const named = await connectClient(gateway, { sessionId: "desk-1" });
    const blank = await connectClient(gateway, { sessionId: "  " });
    expect(named.session.sessionId).toBe("desk-1");
    expect(blank.session.sessionId).toMatch(/^gateway:/);
    expect(gateway.sessions()).toHaveLength(2);
    await named.client.close();
    await vi.waitFor(() => expect(gateway.sessions()).toEqual([blank.session]));
  });

  test("close() ends every session and opens no new one; the runtime stays open", async () => {
    const { lab, gateway } = await setup();
    const a = await connectClient(gateway);
    await gateway.close();
    await a.session.ended;
    expect(gateway.sessions()).toEqual([]);
    await expect(connectClient(gateway)).rejects.toMatchObject({ code: "CANCELLED" });
    expect(lab.governance.tools("any").length).toBeGreaterThan(0);
  });
});

describe("createGatewayServer: catalog changes", () => {
  test("a promoted tool whose definition changes upstream leaves the session's list (list_changed) until tool_search loads it again", async () => {
    const { lab, gateway } = await setup();
    const [a, b] = await Promise.all([connectClient(gateway), connectClient(gateway)]);
    await call(a, "tool_search", { query: "select:mcp__lab__search" });
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    await a.toolNames();
    lab.changeSearch();
    await vi.waitFor(() => expect(a.listChanged()).toBe(2));
    expect(await a.toolNames()).not.toContain("mcp__lab__search");
    expect((await call(a, "mcp__lab__search", { query: "x" })).structuredContent).toMatchObject({
      data: { reason: "stale" },
    });
    const again = await call(a, "tool_search", { query: "select:mcp__lab__search" });
    expect(again.structuredContent).toMatchObject({ results: [{ name: "mcp__lab__search" }] });
    await vi.waitFor(() => expect(a.listChanged()).toBe(3));
    expect(await a.toolNames()).toContain("mcp__lab__search");
    // B had nothing loaded: its list did not change, so it was told nothing.
    expect(b.listChanged()).toBe(0);
  });

  test("eager: a tool the server starts offering is listed at once (list_changed)", async () => {
    const { lab, gateway } = await setup({ eager: true });
    const a = await connectClient(gateway);
    expect(await a.toolNames()).not.toContain("mcp__lab__late");
    lab.addLateTool();
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    expect(await a.toolNames()).toContain("mcp__lab__late");
    expect((await call(a, "mcp__lab__late", { query: "x" })).isError).toBeUndefined();
  });

  test("toolsChanged() after a source switch tells exactly the sessions whose list changed", async () => {
    const { lab, gateway } = await setup({ eager: true });
    const [a, b] = await Promise.all([connectClient(gateway), connectClient(gateway)]);
    lab.governance.sessions.disableSource(a.session.sessionId, "lab");
    expect(await gateway.toolsChanged()).toBe(1);
    await vi.waitFor(() => expect(a.listChanged()).toBe(1));
    expect(await a.toolNames()).toEqual(BUILTINS);
    expect(b.listChanged()).toBe(0);
  });
});
