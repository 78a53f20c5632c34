/**
 * The structured error shape of Sciencegate's MCP servers: how a server reports an upstream failure
 * so that the broker can tell a rate limit from a missing record (see `toGovernanceError` for what each
 * code means to a caller).
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
 * every other code is final. An `isError` result without this shape is the tool's own error: a final
 * `TOOL_FAILED` whose message is its text (at most 500 characters).
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

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
 * Validates a value against the structured error shape (see the module documentation).
 * @param value a `structuredContent.error`, a `_meta` mirror or a JSON-RPC error's `data`
 * @returns the error, or `undefined` when the value does not have the shape
 */
export function parseUpstreamError(value: unknown): UpstreamError | undefined {
  const parsed = UpstreamErrorSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
