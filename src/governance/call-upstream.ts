/**
 * The MCP call of one governed invocation: rate-limit admission, the deadline, retries and the
 * response size cap, with a 429 pausing the whole rate-limit group.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolServerPool } from "../mcp/types.js";
import type { InvokeRequest } from "./broker-types.js";
import type { Clock } from "./clock.js";
import { isGovernanceError } from "./errors.js";
import type { SourceManifest } from "./manifest-schema.js";
import { optional } from "./optional.js";
import type { RateLimiter, RateLimitLease } from "./rate-limiter.js";
import { checkingDepth } from "./refuse-too-deep.js";
import { assertWithinCap } from "./response-cap.js";
import { runWithRetry } from "./retry.js";
import type { CatalogTool } from "./source-catalog.js";
import { classifyFailure } from "./upstream-error.js";

/** The seams of `callUpstream`: the broker's resolved options. */
export interface CallUpstreamOptions {
  pool: ToolServerPool;
  /** Limits per `rateLimitGroup`; undefined admits every call at once. */
  limiter: RateLimiter | undefined;
  /** Deadline of a call when the tool manifest sets none. */
  defaultTimeoutMs: number;
  clock: Clock;
  /** Jitter source for retries. */
  random: () => number;
}

/** One validated, authorized call to make. */
export interface UpstreamCall {
  request: InvokeRequest;
  source: SourceManifest;
  tool: CatalogTool;
  /** The validated arguments. */
  input: Record<string, unknown>;
  /**
   * The invocation row's counters, updated as the call goes so that a failure records the attempts
   * made and the time spent queued.
   */
  tally: { attempts: number; queueWaitMs: number };
}

/**
 * Makes the MCP call of one invocation within its rate limit, deadline, retry policy and size cap.
 * @param call the request, its source and tool, the validated input and the row counters to update
 * @param options the pool, limiter, default deadline, clock and jitter source
 * @returns the raw tool result of the successful attempt (an error result only when not retried away)
 * @throws {GovernanceError} `RATE_LIMIT_QUEUE_FULL`/`RATE_LIMIT_QUEUE_TIMEOUT` from admission, `TIMEOUT`,
 *   `CANCELLED`, `RESPONSE_TOO_LARGE`, `NORMALIZATION_FAILED` (too deep to measure) or the classified
 *   upstream failure of the last attempt
 */
export async function callUpstream(
  call: UpstreamCall,
  options: CallUpstreamOptions,
): Promise<CallToolResult> {
  const { request, source, tool, input, tally } = call;
  const group = source.governance.rateLimitGroup;
  const lease: RateLimitLease | undefined = options.limiter
    ? await options.limiter.acquire(group, optional({ signal: request.signal }))
    : undefined;
  if (lease) tally.queueWaitMs = lease.queueWaitMs;
  const timeoutMs = request.timeoutMs ?? tool.manifest.timeoutMs ?? options.defaultTimeoutMs;
  try {
    const { value, attempts } = await runWithRetry<CallToolResult>(
      async ({ attempt, signal }) => {
        tally.attempts = attempt;
        const raw = await options.pool.callTool(tool.serverId, tool.manifest.mcpToolName, input, {
          signal,
          // The SDK's own request timeout must not fire before our overall deadline does.
          timeoutMs: timeoutMs + 1_000,
          ...optional({ onProgress: request.onProgress }),
        });
        checkingDepth(() => assertWithinCap(raw, source.governance.maxResponseBytes));
        return raw;
      },
      {
        timeoutMs,
        clock: options.clock,
        random: options.random,
        ...optional({ signal: request.signal }),
        policy: optional({ ...tool.manifest.retryPolicy }),
        isFailure: (raw) => (raw.isError ? classifyFailure(raw) : undefined),
        beforeRetry: async ({ failure, signal }) => {
          if (!lease) return;
          if (failure.code === "RATE_LIMITED") {
            lease.noteRateLimited(
              failure.retryAfterMs === undefined ? undefined : failure.retryAfterMs / 1000,
            );
          }
          await lease.waitForTurn(signal);
        },
      },
    );
    tally.attempts = attempts;
    return value;
  } catch (error) {
    if (isGovernanceError(error) && error.attempts > 0) tally.attempts = error.attempts;
    // A final 429 (budget spent, or Retry-After past the deadline) still pauses the whole group,
    // or the next caller would hit an upstream that just asked everyone to wait.
    if (lease && isGovernanceError(error) && error.code === "RATE_LIMITED") {
      lease.noteRateLimited(error.retryAfterMs === undefined ? undefined : error.retryAfterMs / 1000);
    }
    throw error;
  } finally {
    lease?.release();
  }
}
