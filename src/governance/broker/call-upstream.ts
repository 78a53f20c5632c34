/**
 * The MCP call of one governed invocation: rate-limit admission, the deadline, retries and the
 * response size cap, with a 429 pausing the whole rate-limit group.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toGovernanceError } from "../../contract/index.js";
import type { Clock, Span, SpanOptions } from "../../core/index.js";
import {
  SPAN_ATTRIBUTES as A,
  endSpanWithError,
  GovernanceError,
  isGovernanceError,
  optional,
  SPAN_NAMES,
  SpanKind,
  setSpanError,
  startSpan,
  withActiveSpan,
} from "../../core/index.js";
import type { ContinuedRound, ToolServerPool, UpstreamRelay } from "../../mcp/index.js";
import type { CatalogTool } from "../catalog/index.js";
import type { SourceManifest } from "../manifests/index.js";
import type { RateLimitAdmission, RateLimitLease } from "../rate-limit/index.js";
import type { InvokeRequest } from "./broker-types.js";
import { checkingDepth } from "./refuse-too-deep.js";
import { runWithRetry } from "./retry.js";

/** The seams of `callUpstream`: the broker's resolved options. */
export interface CallUpstreamOptions {
  pool: ToolServerPool;
  /** Limits per `rateLimitGroup`; undefined admits every call at once. */
  limiter: RateLimitAdmission | undefined;
  /** Deadline of a call when neither the server's configuration nor the tool manifest sets one. */
  defaultTimeoutMs: number;
  /** The configured deadline of a server's calls (`tool_call_timeout`), if any. */
  serverTimeoutMs: (serverId: string) => number | undefined;
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
  /** Whether the call's span records (and is active): the rate-limit wait and each attempt are then its child spans. */
  traced: boolean;
  /** Answers what the server asks during the call (see `UpstreamInputs`). */
  relay?: UpstreamRelay | undefined;
  /** The 2026-07-28 round a continued call resumes from. */
  continueFrom?: ContinuedRound | undefined;
  /**
   * Resolves once the call's authorization is recorded or held, so that it may start; awaited after
   * the rate-limit admission (the two overlap), before the first attempt.
   */
  authorized?: (() => Promise<void>) | undefined;
}

/** One MCP request, named and attributed as the MCP semantic conventions' client span. */
const ATTEMPT_SPAN_OPTIONS: SpanOptions = Object.freeze({
  kind: SpanKind.CLIENT,
  attributes: Object.freeze({ [A.mcpMethod]: "tools/call", [A.genAiOperation]: "execute_tool" }),
});

const QUEUE_WAIT_SPAN_OPTIONS: SpanOptions = Object.freeze({ kind: SpanKind.INTERNAL });

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
  const { request, source, tool, tally, traced } = call;
  const group = source.governance.rateLimitGroup;
  const lease: RateLimitLease | undefined = options.limiter
    ? await (traced
        ? tracedAcquire(options.limiter, group, request.signal)
        : options.limiter.acquire(group, optional({ signal: request.signal })))
    : undefined;
  if (lease) tally.queueWaitMs = lease.queueWaitMs;
  const timeoutMs = upstreamTimeoutMs(request, tool, options);
  try {
    await call.authorized?.();
    const { value, attempts } = await runWithRetry<CallToolResult>(
      ({ attempt, signal }) => {
        tally.attempts = attempt;
        return traced
          ? tracedAttempt(call, attempt, signal, timeoutMs, options)
          : callOnce(call, signal, timeoutMs, options);
      },
      {
        timeoutMs,
        clock: options.clock,
        random: options.random,
        ...optional({ signal: request.signal }),
        policy: optional({ ...tool.manifest.retryPolicy }),
        isFailure: (raw) => (raw.isError ? toGovernanceError(raw) : undefined),
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

/**
 * The deadline of a call's MCP attempts, in ms: the request's own, else the server's configured one,
 * else the tool manifest's, else the broker default. The operator's per-server setting wins over the
 * manifest author's per-tool default (ARCHITECTURE.md "The one call path").
 * @param request the call (its `timeoutMs`)
 * @param tool the catalog tool (its server and manifest)
 * @param options the broker's default and per-server deadlines
 * @returns the deadline over all attempts
 */
export function upstreamTimeoutMs(
  request: Pick<InvokeRequest, "timeoutMs">,
  tool: CatalogTool,
  options: Pick<CallUpstreamOptions, "defaultTimeoutMs" | "serverTimeoutMs">,
): number {
  return (
    request.timeoutMs ??
    options.serverTimeoutMs(tool.serverId) ??
    tool.manifest.timeoutMs ??
    options.defaultTimeoutMs
  );
}

/** One MCP request of the call, with the size cap checked on its answer. */
async function callOnce(
  call: UpstreamCall,
  signal: AbortSignal,
  timeoutMs: number,
  options: CallUpstreamOptions,
): Promise<CallToolResult> {
  const { request, source, tool, input } = call;
  const raw = await options.pool.callTool(tool.serverId, tool.manifest.mcpToolName, input, {
    signal,
    // The SDK's own request timeout must not fire before our overall deadline does.
    timeoutMs: timeoutMs + 1_000,
    // Lets the transport stop reading an oversized answer; the exact check follows.
    maxResponseBytes: source.governance.maxResponseBytes,
    ...optional({ onProgress: request.onProgress, relay: call.relay, continueFrom: call.continueFrom }),
  });
  checkingDepth(() => assertWithinCap(raw, source.governance.maxResponseBytes));
  return raw;
}

/**
 * An attempt as its own `tools/call <tool>` client span, active while the request runs (so that a
 * transport's HTTP spans are its children). An `isError` answer is `error.type` `tool_error`, as the
 * MCP semantic conventions say, with its `GovernanceError` code in `sciencegate.error.code`; a thrown
 * failure's `error.type` is its code.
 */
async function tracedAttempt(
  call: UpstreamCall,
  attempt: number,
  signal: AbortSignal,
  timeoutMs: number,
  options: CallUpstreamOptions,
): Promise<CallToolResult> {
  const span = startSpan(SPAN_NAMES.toolsCall, ATTEMPT_SPAN_OPTIONS);
  if (span.isRecording()) {
    const { mcpToolName } = call.tool.manifest;
    span.updateName(`${SPAN_NAMES.toolsCall} ${mcpToolName}`);
    span.setAttribute(A.genAiToolName, mcpToolName);
    span.setAttribute(A.serverId, call.tool.serverId);
    span.setAttribute(A.attempt, attempt);
  }
  try {
    const raw = await withActiveSpan(span, callOnce, undefined, call, signal, timeoutMs, options);
    if (raw.isError && span.isRecording()) {
      // The conventions' class of an `isError` answer, and how the broker classified it (retried or not).
      setSpanError(span, "tool_error", undefined);
      span.setAttribute(A.errorCode, toGovernanceError(raw).code);
    }
    span.end();
    return raw;
  } catch (error) {
    endSpanWithError(span, toGovernanceError(error));
    throw error;
  }
}

/** The rate-limit admission as a `sciencegate.queue_wait` span: how long the call waited for a slot. */
async function tracedAcquire(
  limiter: RateLimitAdmission,
  group: string,
  signal: AbortSignal | undefined,
): Promise<RateLimitLease> {
  const span: Span = startSpan(SPAN_NAMES.queueWait, QUEUE_WAIT_SPAN_OPTIONS);
  span.setAttribute(A.rateLimitGroup, group);
  try {
    const lease = await limiter.acquire(group, optional({ signal }));
    span.setAttribute(A.queueWaitMs, lease.queueWaitMs);
    span.end();
    return lease;
  } catch (error) {
    endSpanWithError(span, error);
    throw error;
  }
}

/** The response size cap, applied before a result is parsed or normalized. */

/**
 * The UTF-8 size of what a tool result carries: every text, base64 payload and embedded resource of its
 * content blocks, plus the JSON of `structuredContent`. `_meta` is not counted.
 * @param result a tool result as the MCP client returned it
 * @returns the size in bytes
 */
export function measureResultBytes(result: CallToolResult): number {
  let bytes = 0;
  for (const block of result.content) {
    switch (block.type) {
      case "text":
        bytes += Buffer.byteLength(block.text, "utf8");
        break;
      case "image":
      case "audio":
        bytes += Buffer.byteLength(block.data, "utf8");
        break;
      case "resource":
        bytes += Buffer.byteLength(
          "text" in block.resource ? block.resource.text : block.resource.blob,
          "utf8",
        );
        break;
      default:
        // resource_link carries only a URI and names; they are small by construction.
        break;
    }
  }
  if (result.structuredContent !== undefined) {
    bytes += Buffer.byteLength(JSON.stringify(result.structuredContent), "utf8");
  }
  return bytes;
}

/**
 * Rejects a result above the source's `maxResponseBytes` before anything parses it.
 * @param result a tool result as the MCP client returned it
 * @param maxBytes the source's cap (`governance.maxResponseBytes` of its manifest)
 * @throws {GovernanceError} `RESPONSE_TOO_LARGE` (not retryable) with `data: {bytes, maxBytes}`
 */
export function assertWithinCap(result: CallToolResult, maxBytes: number): void {
  const bytes = measureResultBytes(result);
  if (bytes > maxBytes) {
    throw new GovernanceError(
      "RESPONSE_TOO_LARGE",
      `The response has ${bytes} bytes, more than the source's cap of ${maxBytes} bytes.`,
      { retryable: false, data: { bytes, maxBytes } },
    );
  }
}
