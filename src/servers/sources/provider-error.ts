import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toolErrorResult, type UpstreamErrorCode } from "../../contract/index.js";

/** Optional details of a `ProviderError`. */
export interface ProviderErrorOptions {
  /** The provider's HTTP status, when an HTTP answer came back. */
  status?: number;
  /** The provider's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
  /** The underlying error (kept for debugging, never sent to the client). */
  cause?: unknown;
}

/**
 * A failure of a source tool that the client must see as a structured error result: thrown anywhere
 * inside a tool (HTTP layer, parsers, identifier checks) and turned into `toolErrorResult` by the
 * sources server. Messages never contain the user's query.
 * @example
 * throw new ProviderError("invalid_id", "'abc' is not a PubMed identifier (PMID).");
 */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  readonly code: UpstreamErrorCode;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  /**
   * @param code the structured error code the broker classifies
   * @param message a short reason for a human or model; never the user's query
   * @param options HTTP status, `Retry-After` and cause
   */
  constructor(code: UpstreamErrorCode, message: string, options: ProviderErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }

  /**
   * This failure as the MCP tool result the client receives.
   * @returns a `CallToolResult` with `isError: true` and the structured error
   */
  toToolResult(): CallToolResult {
    const error: { code: UpstreamErrorCode; message: string; status?: number; retryAfterMs?: number } = {
      code: this.code,
      message: this.message,
    };
    if (this.status !== undefined) error.status = this.status;
    if (this.retryAfterMs !== undefined) error.retryAfterMs = this.retryAfterMs;
    return toolErrorResult(error);
  }
}

/**
 * Whether `value` is a `ProviderError` (checked by name and code, so that two copies of the module agree).
 * @param value anything caught
 * @returns true for a `ProviderError`
 */
export function isProviderError(value: unknown): value is ProviderError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { name?: unknown }).name === "ProviderError" &&
    typeof (value as { code?: unknown }).code === "string"
  );
}
