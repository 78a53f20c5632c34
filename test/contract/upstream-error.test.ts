import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import {
  classifyFailure,
  readUpstreamError,
  toolErrorResult,
  type UpstreamErrorCode,
} from "../../src/contract/upstream-error.js";
import { GovernanceError } from "../../src/core/errors.js";

function httpError(status: number): Error {
  return Object.assign(new Error("provider failed"), { status });
}

function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
}

describe("classifyFailure of thrown errors", () => {
  test.each([
    ["McpError RequestTimeout", new McpError(ErrorCode.RequestTimeout, "x"), "TIMEOUT", true],
    [
      "McpError ConnectionClosed",
      new McpError(ErrorCode.ConnectionClosed, "x"),
      "UPSTREAM_UNAVAILABLE",
      true,
    ],
    ["McpError InvalidParams", new McpError(ErrorCode.InvalidParams, "x"), "INVALID_INPUT", false],
    ["McpError MethodNotFound", new McpError(ErrorCode.MethodNotFound, "x"), "TOOL_UNAVAILABLE", false],
    ["McpError InternalError", new McpError(ErrorCode.InternalError, "x"), "UPSTREAM_UNAVAILABLE", false],
    ["AbortError", new DOMException("aborted", "AbortError"), "CANCELLED", false],
    ["TimeoutError of AbortSignal.timeout", new DOMException("late", "TimeoutError"), "TIMEOUT", true],
    ["HTTP 429", httpError(429), "RATE_LIMITED", true],
    ["HTTP 500", httpError(500), "UPSTREAM_UNAVAILABLE", true],
    [
      "HTTP 503 as statusCode",
      Object.assign(new Error("x"), { statusCode: 503 }),
      "UPSTREAM_UNAVAILABLE",
      true,
    ],
    [
      "HTTP 502 on response",
      Object.assign(new Error("x"), { response: { status: 502 } }),
      "UPSTREAM_UNAVAILABLE",
      true,
    ],
    ["StreamableHTTPError 503", new StreamableHTTPError(503, "down"), "UPSTREAM_UNAVAILABLE", true],
    ["HTTP 404", httpError(404), "NOT_FOUND", false],
    ["HTTP 401", httpError(401), "UNAUTHORIZED", false],
    ["HTTP 403", httpError(403), "UNAUTHORIZED", false],
    ["HTTP 400", httpError(400), "INVALID_INPUT", false],
    ["HTTP 422", httpError(422), "INVALID_INPUT", false],
    ["HTTP 418", httpError(418), "UPSTREAM_UNAVAILABLE", false],
    ["ECONNREFUSED", systemError("ECONNREFUSED"), "UPSTREAM_UNAVAILABLE", true],
    ["EPIPE of a dead stdio server", systemError("EPIPE"), "UPSTREAM_UNAVAILABLE", true],
    [
      "fetch failed with a socket cause",
      new TypeError("fetch failed", { cause: systemError("ECONNRESET") }),
      "UPSTREAM_UNAVAILABLE",
      true,
    ],
    ["unknown error", new Error("something odd"), "UPSTREAM_UNAVAILABLE", false],
    ["a thrown string", "boom", "UPSTREAM_UNAVAILABLE", false],
  ] as const)("%s -> %s (retryable %s)", (_name, input, code, retryable) => {
    const info = classifyFailure(input);
    expect(info.code).toBe(code);
    expect(info.retryable).toBe(retryable);
  });

  test("keeps the HTTP status of an HTTP failure", () => {
    expect(classifyFailure(httpError(503))).toMatchObject({ status: 503 });
  });

  test("never guesses from words in a message", () => {
    const info = classifyFailure(
      new Error("HTTP 429 Too Many Requests: rate limit, retry after 5s, timeout"),
    );
    expect(info).toEqual({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: false,
      message: "HTTP 429 Too Many Requests: rate limit, retry after 5s, timeout",
    });
  });

  test("passes a GovernanceError through with its code, retryability and retryAfterMs", () => {
    const error = new GovernanceError("RATE_LIMIT_QUEUE_FULL", "queue full", {
      retryable: true,
      retryAfterMs: 750,
      data: { status: 429 },
    });
    expect(classifyFailure(error)).toEqual({
      code: "RATE_LIMIT_QUEUE_FULL",
      retryable: true,
      retryAfterMs: 750,
      status: 429,
      message: "queue full",
    });
  });

  test("reads a structured error attached to an McpError as its data", () => {
    const error = new McpError(-32603, "upstream", {
      code: "rate_limited",
      status: 429,
      retryAfterMs: 1200,
      message: "m",
    });
    expect(classifyFailure(error)).toEqual({
      code: "RATE_LIMITED",
      retryable: true,
      status: 429,
      retryAfterMs: 1200,
      message: "m",
    });
  });
});

describe("classifyFailure of structured error results", () => {
  test.each([
    [{ code: "rate_limited", status: 429, retryAfterMs: 2000 }, "RATE_LIMITED", true],
    [{ code: "not_found", status: 404 }, "NOT_FOUND", false],
    [{ code: "invalid_id" }, "INVALID_INPUT", false],
    [{ code: "upstream_unavailable", status: 503 }, "UPSTREAM_UNAVAILABLE", true],
    [{ code: "upstream_unavailable" }, "UPSTREAM_UNAVAILABLE", true],
    [{ code: "upstream_unavailable", status: 200 }, "UPSTREAM_UNAVAILABLE", false],
    [{ code: "not_open_access", status: 200 }, "LICENSE_BLOCKED", false],
    [{ code: "unauthorized", status: 401 }, "UNAUTHORIZED", false],
    [{ code: "invalid_input" }, "INVALID_INPUT", false],
    [{ code: "response_too_large" }, "RESPONSE_TOO_LARGE", false],
  ] as const)("%o -> %s (retryable %s)", (fields, code, retryable) => {
    const result = toolErrorResult({
      ...fields,
      code: fields.code as UpstreamErrorCode,
      message: "provider said no",
    });
    const info = classifyFailure(result);
    expect(info.code).toBe(code);
    expect(info.retryable).toBe(retryable);
    expect(info.message).toBe("provider said no");
    expect(info.status).toBe("status" in fields ? fields.status : undefined);
    expect(info.retryAfterMs).toBe("retryAfterMs" in fields ? fields.retryAfterMs : undefined);
  });

  test("a third-party error result is final UPSTREAM_UNAVAILABLE with its text, cut to 500 characters", () => {
    const text = `Error: 503 upstream rate limited ${"x".repeat(1000)}`;
    const info = classifyFailure({
      isError: true,
      content: [{ type: "text", text }],
    } satisfies CallToolResult);
    expect(info).toEqual({ code: "UPSTREAM_UNAVAILABLE", retryable: false, message: text.slice(0, 500) });
  });

  test("reads the _meta mirror when structuredContent is missing", () => {
    const { structuredContent: _dropped, ...withoutStructured } = toolErrorResult({
      code: "not_found",
      status: 404,
      message: "gone",
    });
    expect(readUpstreamError(withoutStructured)).toEqual({ code: "not_found", status: 404, message: "gone" });
    expect(classifyFailure(withoutStructured).code).toBe("NOT_FOUND");
  });
});

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
      expect(classifyFailure(result)).toEqual({
        code: "RATE_LIMITED",
        retryable: true,
        status: 429,
        retryAfterMs: 1500,
        message: "NCBI said 429",
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
