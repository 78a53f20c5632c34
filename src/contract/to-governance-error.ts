/**
 * The one mapping from a failure of unknown shape (anything thrown, or an `isError` tool result) to a
 * `GovernanceError` with a retry decision. Every layer that catches something it did not throw itself
 * calls it; it reads structured data only (error classes, numeric codes, HTTP statuses, the structured
 * error of a Sciencegate server) and never searches a message for words.
 *
 * | What failed                                                  | Code                          | Retryable |
 * | ------------------------------------------------------------ | ----------------------------- | --------- |
 * | a `GovernanceError` (any copy of the package)                | its own                       | its own   |
 * | `isError` result with a Sciencegate upstream error           | by its `code` (see below)     | by code   |
 * | `isError` result without one (the tool reported an error)    | `TOOL_FAILED`                 | no        |
 * | `AbortError` / `TimeoutError`                                | `CANCELLED` / `TIMEOUT`       | no / yes  |
 * | JSON-RPC error: request timeout, connection closed           | `TIMEOUT`, `UPSTREAM_UNAVAILABLE` | yes   |
 * | MCP SDK error: request timeout, connection closed or lost    | `TIMEOUT`, `UPSTREAM_UNAVAILABLE` | yes   |
 * | JSON-RPC error: invalid params, method not found, other      | `INVALID_INPUT`, `TOOL_UNAVAILABLE`, `UPSTREAM_UNAVAILABLE` | no |
 * | HTTP 429 / 5xx / 404 / 401, 403 / 400, 422 / other           | `RATE_LIMITED` / `UPSTREAM_UNAVAILABLE` / `NOT_FOUND` / `UNAUTHORIZED` / `INVALID_INPUT` / `UPSTREAM_UNAVAILABLE` | 429 and 5xx |
 * | a socket error (`ECONNREFUSED`, `EPIPE`, ...), also as `cause` | `UPSTREAM_UNAVAILABLE`      | yes       |
 * | anything else                                                | the caller's `unrecognized`   | no        |
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { GovernanceError, type GovernanceErrorCode, isGovernanceError } from "../core/index.js";
import { parseUpstreamError, readUpstreamError, type UpstreamError } from "./upstream-error.js";

/** Options of {@link toGovernanceError}. */
export interface ToGovernanceErrorOptions {
  /**
   * The code of a failure with no structured signal (a plain `Error`, a thrown string), which only the
   * caller can name: `UPSTREAM_UNAVAILABLE` on the path to an MCP server or provider, `TOOL_FAILED` for
   * a tool's own code (an app tool in the governed tool node), `NORMALIZATION_FAILED` for a PDF that
   * cannot be read. Such a failure is never retryable.
   * @default "UPSTREAM_UNAVAILABLE"
   */
  unrecognized?: GovernanceErrorCode | undefined;
}

/** One classified failure, before it becomes an error. */
interface Failure {
  code: GovernanceErrorCode;
  retryable: boolean;
  message: string;
  retryAfterMs?: number;
  status?: number;
}

const MAX_TOOL_MESSAGE = 500;

/** What each upstream code means to a caller; `upstream_unavailable` is refined by its status. */
const UPSTREAM_CODE_MAP: Record<UpstreamError["code"], { code: GovernanceErrorCode; retryable: boolean }> = {
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
 * The local errors of the MCP SDK's client (`SdkError`, named by a string `code`) that carry a signal:
 * a request that timed out, or a connection that closed or could not send. Its HTTP errors carry the
 * status (read below) and its auth errors a 401/403.
 */
const SDK_ERROR_CODES: Readonly<Record<string, { code: GovernanceErrorCode; retryable: boolean }>> = {
  REQUEST_TIMEOUT: { code: "TIMEOUT", retryable: true },
  CONNECTION_CLOSED: { code: "UPSTREAM_UNAVAILABLE", retryable: true },
  NOT_CONNECTED: { code: "UPSTREAM_UNAVAILABLE", retryable: true },
  SEND_FAILED: { code: "UPSTREAM_UNAVAILABLE", retryable: true },
};

/**
 * Maps a failure of unknown shape to a `GovernanceError` (see the module documentation for the table).
 * @param caught a thrown value, or a `CallToolResult` with `isError: true`
 * @param options the code of a failure with no structured signal
 * @returns `caught` itself when it is already a `GovernanceError`; otherwise a new error whose `cause`
 *   is `caught`, with `retryAfterMs` and `data.status` when known
 * @example
 * const error = toGovernanceError(caught, { unrecognized: "TOOL_FAILED" });
 * return toolMessage(toErrorBody(error));
 */
export function toGovernanceError(caught: unknown, options: ToGovernanceErrorOptions = {}): GovernanceError {
  if (isGovernanceError(caught)) return caught;
  const failure =
    (isCallToolResult(caught) ? fromResult(caught) : recognize(caught, 0)) ??
    unrecognized(caught, options.unrecognized ?? "UPSTREAM_UNAVAILABLE");
  return new GovernanceError(failure.code, failure.message, {
    retryable: failure.retryable,
    cause: caught,
    ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
    ...(failure.status === undefined ? {} : { data: { status: failure.status } }),
  });
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

function fromResult(result: CallToolResult): Failure {
  const upstream = readUpstreamError(result);
  if (upstream) return fromUpstream(upstream);
  const text = result.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n")
    .slice(0, MAX_TOOL_MESSAGE);
  return { code: "TOOL_FAILED", retryable: false, message: text || "The tool returned an error." };
}

/** The failure a structured signal names, or `undefined` when there is none. */
function recognize(value: unknown, depth: number): Failure | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (isGovernanceError(value))
    return { code: value.code, retryable: value.retryable, message: value.message };
  const error = value as ErrorLike;
  const message = messageOf(value);
  if (error.name === "AbortError") return { code: "CANCELLED", retryable: false, message };
  if (error.name === "TimeoutError") return { code: "TIMEOUT", retryable: true, message };
  if (typeof error.code === "number" && error.code < 0) {
    // A JSON-RPC error; a server may attach our structured error as its data.
    const upstream = parseUpstreamError(error.data);
    if (upstream) return fromUpstream(upstream);
    return fromJsonRpcCode(error.code, message);
  }
  if (
    error.name === "SdkError" &&
    typeof error.code === "string" &&
    Object.hasOwn(SDK_ERROR_CODES, error.code)
  ) {
    return { ...(SDK_ERROR_CODES[error.code] as Failure), message };
  }
  const status = httpStatusOf(error);
  if (status !== undefined) return fromHttpStatus(status, message);
  if (typeof error.code === "string" && TRANSPORT_ERROR_CODES.has(error.code)) {
    return { code: "UPSTREAM_UNAVAILABLE", retryable: true, message };
  }
  // fetch wraps the socket error as its cause (TypeError "fetch failed" with cause.code).
  if (depth < 3 && error.cause !== undefined) {
    const inner = recognize(error.cause, depth + 1);
    if (inner) return { ...inner, message };
  }
  return undefined;
}

function unrecognized(value: unknown, code: GovernanceErrorCode): Failure {
  return { code, retryable: false, message: messageOf(value) };
}

function messageOf(value: unknown): string {
  const message = (value as ErrorLike | null)?.message;
  return typeof message === "string" ? message : String(value);
}

function fromJsonRpcCode(code: number, message: string): Failure {
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

function fromHttpStatus(status: number, message: string): Failure {
  const base = { status, message };
  if (status === 429) return { ...base, code: "RATE_LIMITED", retryable: true };
  if (status >= 500) return { ...base, code: "UPSTREAM_UNAVAILABLE", retryable: true };
  if (status === 404) return { ...base, code: "NOT_FOUND", retryable: false };
  if (status === 401 || status === 403) return { ...base, code: "UNAUTHORIZED", retryable: false };
  if (status === 400 || status === 422) return { ...base, code: "INVALID_INPUT", retryable: false };
  return { ...base, code: "UPSTREAM_UNAVAILABLE", retryable: false };
}

function fromUpstream(upstream: UpstreamError): Failure {
  const mapped = UPSTREAM_CODE_MAP[upstream.code];
  let retryable = mapped.retryable;
  if (upstream.code === "upstream_unavailable" && upstream.status !== undefined) {
    // With an HTTP answer, only 429 and 5xx are transient (a malformed 200 body is not).
    retryable = upstream.status === 429 || upstream.status >= 500;
  }
  const failure: Failure = { code: mapped.code, retryable, message: upstream.message };
  if (upstream.retryAfterMs !== undefined) failure.retryAfterMs = upstream.retryAfterMs;
  if (upstream.status !== undefined) failure.status = upstream.status;
  return failure;
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

function isCallToolResult(value: unknown): value is CallToolResult {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    Array.isArray((value as { content?: unknown }).content)
  );
}
