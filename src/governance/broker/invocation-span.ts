/**
 * The span of one `Broker.invoke` (ARCHITECTURE.md, "The one call path"): started before the call,
 * described from its invocation row when it ends, so that a trace leads to its ledger row.
 */
import {
  SPAN_ATTRIBUTES as A,
  endSpanWithError,
  isGovernanceError,
  SPAN_NAMES,
  type Span,
  SpanKind,
  type SpanOptions,
  startSpan,
} from "../../core/index.js";
import type { InvocationRecord } from "../audit/index.js";

/** Shared by every call: nothing is built per call when no SDK records. */
const INVOKE_SPAN_OPTIONS: SpanOptions = Object.freeze({ kind: SpanKind.INTERNAL });

/** What the span says of a call: its invocation row, finished or not. */
export type InvocationSpanRow = Omit<InvocationRecord, "status" | "finishedAt" | "durationMs">;

/**
 * Starts the span of one governed call under the active span (a graph run's, an executor's).
 * @returns the span (non-recording until an SDK is registered)
 */
export function startInvocationSpan(): Span {
  return startSpan(SPAN_NAMES.invoke, INVOKE_SPAN_OPTIONS);
}

/**
 * Describes a call on its span from its row, marks a failure, and ends the span.
 * @param span the call's span
 * @param row the call's row (the recorded row of a replay); undefined when the call failed before it
 *   had one, its invocation id then taken from the error's data
 * @param replayed whether the outcome came from the ledger
 * @param error what the call threw, if it failed
 */
export function endInvocationSpan(
  span: Span,
  row: InvocationSpanRow | undefined,
  replayed: boolean,
  error?: unknown,
): void {
  if (span.isRecording()) {
    if (row) describeRow(span, row);
    else if (isGovernanceError(error) && typeof error.data?.invocationId === "string") {
      span.setAttribute(A.invocationId, error.data.invocationId);
    }
    span.setAttribute(A.replayed, replayed);
  }
  if (error === undefined) span.end();
  else endSpanWithError(span, error);
}

function describeRow(span: Span, row: InvocationSpanRow): void {
  // Only a resolved tool names the span: an unknown id from a model must not become a span name.
  if (row.mcpToolName !== undefined) span.updateName(`${SPAN_NAMES.invoke} ${row.sourceId}/${row.toolId}`);
  span.setAttribute(A.invocationId, row.invocationId);
  span.setAttribute(A.sessionId, row.sessionId);
  span.setAttribute(A.sourceId, row.sourceId);
  span.setAttribute(A.toolId, row.toolId);
  span.setAttribute(A.attempts, row.attempts);
  span.setAttribute(A.cacheHit, row.cacheHit);
  span.setAttribute(A.queueWaitMs, row.queueWaitMs);
  if (row.threadId !== undefined) span.setAttribute(A.genAiConversationId, row.threadId);
  if (row.toolCallId !== undefined) span.setAttribute(A.genAiToolCallId, row.toolCallId);
  if (row.runId !== undefined) span.setAttribute(A.runId, row.runId);
  if (row.authorizationId !== undefined) span.setAttribute(A.authorizationId, row.authorizationId);
}
