/**
 * The structured error shape of Sciencegate's MCP servers, and the classification of every failure a
 * governed call can meet (MCP errors, transport errors, HTTP statuses, error results) into a
 * `GovernanceErrorCode` with a retry decision.
 *
 * ## Structured error shape
 *
 * A Sciencegate MCP server reports an upstream failure as a tool result, never as an empty success:
 *
 * ```json
 * {
 *   "isError": true,
 *   "content": [{ "type": "text", "text": "{\"error\":{\"code\":\"rate_limited\",...}}" }],
 *   "structuredContent": {
 *     "error": { "code": "rate_limited", "status": 429, "retryAfterMs": 2000, "message": "..." }
 *   },
 *   "_meta": { "sciencegate/error": { "code": "rate_limited", "status": 429, "retryAfterMs": 2000, "message": "..." } }
 * }
 * ```
 *
 * - `code` (required): one of `UpstreamErrorCode`.
 * - `status` (optional): the provider's HTTP status. Omit it when no HTTP answer came back (DNS,
 *   connection refused, reset): the failure then counts as a transient transport error.
 * - `retryAfterMs` (optional): the provider's `Retry-After`, converted to milliseconds.
 * - `message` (required): a short human-readable reason. Never echo the user's query in it.
 *
 * The broker retries `rate_limited`, and `upstream_unavailable` when `status` is absent, 429 or 5xx;
 * every other code is final. Third-party servers that return `isError` without this shape are treated
 * as a final `UPSTREAM_UNAVAILABLE` whose message is their text (at most 500 characters).
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type GovernanceErrorCode, isGovernanceError } from "../core/index.js";

/** The `_meta` key that mirrors the structured error of a Sciencegate server. */
export const UPSTREAM_ERROR_META_KEY = "sciencegate/error";

/** The error codes a Sciencegate MCP server may put in `structuredContent.error.code`. */
export type UpstreamErrorCode =
  | "rate_limited"
  | "not_found"
  | "invalid_id"
  | "upstream_unavailable"
  | "not_open_access"
  | "unauthorized"
  | "invalid_input"
  | "response_too_large";

/** The structured error of a Sciencegate MCP server (see the module documentation). */
export interface UpstreamError {
  code: UpstreamErrorCode;
  message: string;
  status?: number;
  retryAfterMs?: number;
}

/** The outcome of classifying one failure: what the broker reports and whether it may retry. */
export interface FailureInfo {
  code: GovernanceErrorCode;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
  message: string;
}

const MAX_THIRD_PARTY_MESSAGE = 500;

const UpstreamErrorSchema = z.object({
  code: z.enum([
    "rate_limited",
    "not_found",
    "invalid_id",
    "upstream_unavailable",
    "not_open_access",
    "unauthorized",
    "invalid_input",
    "response_too_large",
  ]),
  message: z.string(),
  status: z.number().int().min(100).max(599).exactOptional(),
  retryAfterMs: z.number().finite().nonnegative().exactOptional(),
});

/** What each upstream code means to the broker; `upstream_unavailable` is refined by its status. */
const UPSTREAM_CODE_MAP: Record<UpstreamErrorCode, { code: GovernanceErrorCode; retryable: boolean }> = {
  rate_limited: { code: "RATE_LIMITED", retryable: true },
  not_found: { code: "NOT_FOUND", retryable: false },
  invalid_id: { code: "INVALID_INPUT", retryable: false },
  upstream_unavailable: { code: "UPSTREAM_UNAVAILABLE", retryable: true },
  // The record exists but its licence does not allow the open download that was asked for.
  not_open_access: { code: "LICENSE_BLOCKED", retryable: false },
  unauthorized: { code: "UNAUTHORIZED", retryable: false },
  invalid_input: { code: "INVALID_INPUT", retryable: false },
  response_too_large: { code: "RESPONSE_TOO_LARGE", retryable: false },
};

/** Node system error codes of a failed or broken connection: transient by nature. */
const TRANSPORT_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

/**
 * Builds the error result a Sciencegate MCP server returns for an upstream failure.
 * @param err the structured error; `status` is the provider's HTTP status, `retryAfterMs` its `Retry-After`
 * @returns a `CallToolResult` with `isError: true`, `structuredContent.error`, the `_meta` mirror and a
 *   text block holding the same JSON (for clients that read text only)
 * @example
 * return toolErrorResult({ code: "not_found", status: 404, message: "No PubMed record 123." });
 */
export function toolErrorResult(err: {
  code: UpstreamErrorCode;
  message: string;
  status?: number;
  retryAfterMs?: number;
}): CallToolResult {
  const error: UpstreamError = { code: err.code, message: err.message };
  if (err.status !== undefined) error.status = err.status;
  if (err.retryAfterMs !== undefined) error.retryAfterMs = err.retryAfterMs;
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify({ error }) }],
    structuredContent: { error },
    _meta: { [UPSTREAM_ERROR_META_KEY]: error },
  };
}

/**
 * Reads the structured error of an error result, from `structuredContent.error` or the `_meta` mirror.
 * @param result a tool result as the MCP client returned it
 * @returns the validated error, or `undefined` when the result is not an error or carries no valid shape
 */
export function readUpstreamError(result: CallToolResult): UpstreamError | undefined {
  if (result.isError !== true) return undefined;
  const fromContent = parseUpstreamError(result.structuredContent?.error);
  return fromContent ?? parseUpstreamError(result._meta?.[UPSTREAM_ERROR_META_KEY]);
}

/**
 * Classifies a failure from structured data only (error classes, numeric codes, HTTP statuses,
 * structured error results); it never searches a message for words.
 * @param errorOrResult a thrown value, or a `CallToolResult` with `isError: true`
 * @returns the governance code, whether a retry may help, and `retryAfterMs`/`status` when known
 */
export function classifyFailure(errorOrResult: unknown): FailureInfo {
  if (isGovernanceError(errorOrResult)) {
    return withOptional(
      { code: errorOrResult.code, retryable: errorOrResult.retryable, message: errorOrResult.message },
      errorOrResult.retryAfterMs,
      typeof errorOrResult.data?.status === "number" ? errorOrResult.data.status : undefined,
    );
  }
  if (isCallToolResult(errorOrResult)) return classifyResult(errorOrResult);
  if (!(typeof errorOrResult === "object" && errorOrResult !== null)) {
    return { code: "UPSTREAM_UNAVAILABLE", retryable: false, message: String(errorOrResult) };
  }
  return classifyError(errorOrResult as ErrorLike);
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  status?: unknown;
  statusCode?: unknown;
  response?: { status?: unknown };
  data?: unknown;
  cause?: unknown;
}

function classifyResult(result: CallToolResult): FailureInfo {
  const upstream = readUpstreamError(result);
  if (upstream) return fromUpstream(upstream);
  const text = result.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n")
    .slice(0, MAX_THIRD_PARTY_MESSAGE);
  return { code: "UPSTREAM_UNAVAILABLE", retryable: false, message: text || "The tool returned an error." };
}

function classifyError(error: ErrorLike, depth = 0): FailureInfo {
  const message = typeof error.message === "string" ? error.message : String(error);
  if (error.name === "AbortError") return { code: "CANCELLED", retryable: false, message };
  if (error.name === "TimeoutError") return { code: "TIMEOUT", retryable: true, message };
  if (typeof error.code === "number" && error.code < 0) {
    // A JSON-RPC error; a server may attach our structured error as its data.
    const upstream = parseUpstreamError(error.data);
    if (upstream) return fromUpstream(upstream);
    return fromJsonRpcCode(error.code, message);
  }
  const status = httpStatusOf(error);
  if (status !== undefined) return fromHttpStatus(status, message);
  if (typeof error.code === "string" && TRANSPORT_ERROR_CODES.has(error.code)) {
    return { code: "UPSTREAM_UNAVAILABLE", retryable: true, message };
  }
  // fetch wraps the socket error as its cause (TypeError "fetch failed" with cause.code).
  if (depth < 3 && typeof error.cause === "object" && error.cause !== null) {
    const inner = classifyError(error.cause as ErrorLike, depth + 1);
    if (inner.retryable || inner.code !== "UPSTREAM_UNAVAILABLE") return { ...inner, message };
  }
  return { code: "UPSTREAM_UNAVAILABLE", retryable: false, message };
}

function fromJsonRpcCode(code: number, message: string): FailureInfo {
  switch (code) {
    case ErrorCode.RequestTimeout:
      return { code: "TIMEOUT", retryable: true, message };
    case ErrorCode.ConnectionClosed:
      return { code: "UPSTREAM_UNAVAILABLE", retryable: true, message };
    case ErrorCode.InvalidParams:
      return { code: "INVALID_INPUT", retryable: false, message };
    case ErrorCode.MethodNotFound:
      return { code: "TOOL_UNAVAILABLE", retryable: false, message };
    default:
      return { code: "UPSTREAM_UNAVAILABLE", retryable: false, message };
  }
}

function fromHttpStatus(status: number, message: string): FailureInfo {
  const base = { status, message };
  if (status === 429) return { ...base, code: "RATE_LIMITED", retryable: true };
  if (status >= 500) return { ...base, code: "UPSTREAM_UNAVAILABLE", retryable: true };
  if (status === 404) return { ...base, code: "NOT_FOUND", retryable: false };
  if (status === 401 || status === 403) return { ...base, code: "UNAUTHORIZED", retryable: false };
  if (status === 400 || status === 422) return { ...base, code: "INVALID_INPUT", retryable: false };
  return { ...base, code: "UPSTREAM_UNAVAILABLE", retryable: false };
}

function fromUpstream(upstream: UpstreamError): FailureInfo {
  const mapped = UPSTREAM_CODE_MAP[upstream.code];
  let retryable = mapped.retryable;
  if (upstream.code === "upstream_unavailable" && upstream.status !== undefined) {
    // With an HTTP answer, only 429 and 5xx are transient (a malformed 200 body is not).
    retryable = upstream.status === 429 || upstream.status >= 500;
  }
  return withOptional(
    { code: mapped.code, retryable, message: upstream.message },
    upstream.retryAfterMs,
    upstream.status,
  );
}

function httpStatusOf(error: ErrorLike): number | undefined {
  // StreamableHTTPError and SseError of the MCP SDK carry the HTTP status as a positive `code`.
  for (const candidate of [error.status, error.statusCode, error.response?.status, error.code]) {
    if (
      typeof candidate === "number" &&
      Number.isInteger(candidate) &&
      candidate >= 100 &&
      candidate <= 599
    ) {
      return candidate;
    }
  }
  return undefined;
}

function parseUpstreamError(value: unknown): UpstreamError | undefined {
  const parsed = UpstreamErrorSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function isCallToolResult(value: unknown): value is CallToolResult {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    Array.isArray((value as { content?: unknown }).content)
  );
}

function withOptional(
  info: FailureInfo,
  retryAfterMs: number | undefined,
  status: number | undefined,
): FailureInfo {
  if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;
  if (status !== undefined) info.status = status;
  return info;
}
