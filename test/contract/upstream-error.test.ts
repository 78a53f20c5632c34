import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { toGovernanceError } from "../../src/contract/to-governance-error.js";
import { readUpstreamError, toolErrorResult } from "../../src/contract/upstream-error.js";

describe("toolErrorResult and readUpstreamError", () => {
  test("builds isError, structuredContent, the _meta mirror and a JSON text block", () => {
    const result = toolErrorResult({
      code: "rate_limited",
      status: 429,
      retryAfterMs: 3000,
      message: "slow down",
    });
    const error = { code: "rate_limited", status: 429, retryAfterMs: 3000, message: "slow down" };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ error });
    expect(result._meta).toEqual({ "sciencegate/error": error });
    expect(result.content).toHaveLength(1);
    const block = result.content[0];
    expect(block?.type === "text" && JSON.parse(block.text)).toEqual({ error });
  });

  test("omits absent optional fields instead of writing undefined", () => {
    const result = toolErrorResult({ code: "invalid_id", message: "bad PMID" });
    expect(Object.keys(result.structuredContent?.error as object).sort()).toEqual(["code", "message"]);
  });

  test.each([
    [
      "a successful result",
      { content: [], structuredContent: { error: { code: "not_found", message: "x" } } },
    ],
    [
      "an unknown code",
      { isError: true, content: [], structuredContent: { error: { code: "teapot", message: "x" } } },
    ],
    ["no message", { isError: true, content: [], structuredContent: { error: { code: "not_found" } } }],
    [
      "a status out of range",
      {
        isError: true,
        content: [],
        structuredContent: { error: { code: "not_found", message: "x", status: 9 } },
      },
    ],
  ])("reads nothing from %s", (_name, result) => {
    expect(readUpstreamError(result as CallToolResult)).toBeUndefined();
  });

  test("survives a real MCP round trip from server to client", async () => {
    const server = new McpServer({ name: "fake", version: "1.0.0" });
    server.registerTool("lookup", { description: "always rate limited" }, async () =>
      toolErrorResult({ code: "rate_limited", status: 429, retryAfterMs: 1500, message: "NCBI said 429" }),
    );
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientTransport);
    try {
      const result = (await client.callTool({ name: "lookup", arguments: {} })) as CallToolResult;
      expect(toGovernanceError(result)).toMatchObject({
        code: "RATE_LIMITED",
        retryable: true,
        data: { status: 429 },
        retryAfterMs: 1500,
        message: "NCBI said 429",
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
