import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { toGovernanceError } from "../../src/contract/to-governance-error.js";
import {
  readUpstreamError,
  toolErrorResult,
  type UpstreamErrorCode,
} from "../../src/contract/upstream-error.js";
import { GovernanceError, toErrorBody } from "../../src/core/errors.js";

function httpError(status: number): Error {
  return Object.assign(new Error("provider failed"), { status });
}

function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
}

describe("toGovernanceError of thrown values", () => {
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
    [
      "a GovernanceError wrapped as the cause of an app's error",
      new Error("wrapped", { cause: new GovernanceError("NOT_FOUND", "no record") }),
      "NOT_FOUND",
      false,
    ],
  ] as const)("%s -> %s (retryable %s)", (_name, input, code, retryable) => {
    const error = toGovernanceError(input);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.cause).toBe(input);
  });

  test("keeps the HTTP status of an HTTP failure as data.status", () => {
    expect(toGovernanceError(httpError(503))).toMatchObject({ data: { status: 503 } });
  });

  test("never guesses from words in a message", () => {
    const error = toGovernanceError(
      new Error("HTTP 429 Too Many Requests: rate limit, retry after 5s, timeout"),
    );
    expect(toErrorBody(error)).toEqual({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: false,
      attempts: 0,
      message: "HTTP 429 Too Many Requests: rate limit, retry after 5s, timeout",
    });
  });

  test("returns a GovernanceError itself, with its code, retryability, retryAfterMs and data", () => {
    const error = new GovernanceError("RATE_LIMIT_QUEUE_FULL", "queue full", {
      retryable: true,
      retryAfterMs: 750,
      data: { status: 429 },
    });
    expect(toGovernanceError(error)).toBe(error);
    expect(toGovernanceError(error, { unrecognized: "TOOL_FAILED" })).toBe(error);
  });

  test.each([
    ["a plain Error", new RangeError("refused: bad input"), "refused: bad input"],
    ["a thrown string", "boom", "boom"],
    ["a thrown object without a signal", { detail: 1 }, "[object Object]"],
  ])("%s with no structured signal gets the caller's code, never retryable", (_name, input, message) => {
    for (const unrecognized of ["TOOL_FAILED", "NORMALIZATION_FAILED", "UPSTREAM_UNAVAILABLE"] as const) {
      expect(toErrorBody(toGovernanceError(input, { unrecognized }))).toEqual({
        code: unrecognized,
        message,
        retryable: false,
        attempts: 0,
      });
    }
  });

  test("a structured signal wins over the caller's code: a tool's socket error is still the upstream's", () => {
    const error = toGovernanceError(new TypeError("fetch failed", { cause: systemError("ECONNRESET") }), {
      unrecognized: "TOOL_FAILED",
    });
    expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryable: true, message: "fetch failed" });
    expect(
      toGovernanceError(new DOMException("aborted", "AbortError"), { unrecognized: "TOOL_FAILED" }).code,
    ).toBe("CANCELLED");
  });

  test("reads a structured error attached to an McpError as its data", () => {
    const error = new McpError(-32603, "upstream", {
      code: "rate_limited",
      status: 429,
      retryAfterMs: 1200,
      message: "m",
    });
    expect(toGovernanceError(error)).toMatchObject({
      code: "RATE_LIMITED",
      retryable: true,
      data: { status: 429 },
      retryAfterMs: 1200,
      message: "m",
    });
  });
});

describe("toGovernanceError of error results", () => {
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
    const error = toGovernanceError(result);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toBe("provider said no");
    expect(error.data?.status).toBe("status" in fields ? fields.status : undefined);
    expect(error.retryAfterMs).toBe("retryAfterMs" in fields ? fields.retryAfterMs : undefined);
  });

  test.each([
    ["plain text", [{ type: "text" as const, text: "Traceback (most recent call last): ValueError" }]],
    ["no text at all", []],
  ])(
    "an error result without a Sciencegate error (%s) is the tool's own failure: final TOOL_FAILED",
    (_name, content) => {
      const error = toGovernanceError({ isError: true, content } satisfies CallToolResult);
      expect(toErrorBody(error)).toEqual({
        code: "TOOL_FAILED",
        retryable: false,
        attempts: 0,
        message: content[0]?.text ?? "The tool returned an error.",
      });
    },
  );

  test("a malformed structured error is not a Sciencegate error either: TOOL_FAILED", () => {
    const error = toGovernanceError({
      isError: true,
      content: [{ type: "text", text: "teapot" }],
      structuredContent: { error: { code: "teapot", status: "x" } },
    } satisfies CallToolResult);
    expect(error).toMatchObject({ code: "TOOL_FAILED", retryable: false, message: "teapot" });
  });

  test("a tool's error text is cut to 500 characters and kept word for word (no guessing from it)", () => {
    const text = `Error: 503 upstream rate limited ${"x".repeat(1000)}`;
    const error = toGovernanceError({
      isError: true,
      content: [{ type: "text", text }],
    } satisfies CallToolResult);
    expect(error).toMatchObject({ code: "TOOL_FAILED", retryable: false, message: text.slice(0, 500) });
  });

  test("reads the _meta mirror when structuredContent is missing", () => {
    const { structuredContent: _dropped, ...withoutStructured } = toolErrorResult({
      code: "not_found",
      status: 404,
      message: "gone",
    });
    expect(readUpstreamError(withoutStructured)).toEqual({ code: "not_found", status: 404, message: "gone" });
    expect(toGovernanceError(withoutStructured).code).toBe("NOT_FOUND");
  });
});
