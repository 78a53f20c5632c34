/**
 * OpenTelemetry spans of governed calls (see ARCHITECTURE.md, "The one call path"). Spans go through
 * `@opentelemetry/api` only: until the app registers an SDK the tracer is a no-op, and callers check
 * `span.isRecording()` before they build a name or an attribute, so an untraced call pays one no-op span.
 */
import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { isGovernanceError } from "./errors.js";
import { PACKAGE_VERSION } from "./version.js";

/** Instrumentation scope of every Sciencegate span. */
export const TRACER_NAME = "sciencegate";

/**
 * The tracer of every Sciencegate span, taken once: a proxy of the global tracer provider, so an SDK
 * registered later (or never) is honoured without asking for the tracer again.
 */
export const tracer: Tracer = trace.getTracer(TRACER_NAME, PACKAGE_VERSION);

/** Span attribute names: OpenTelemetry semantic conventions (MCP, GenAI) and Sciencegate's own. */
export const SPAN_ATTRIBUTES = {
  errorType: "error.type",
  errorCode: "sciencegate.error.code",
  genAiOperation: "gen_ai.operation.name",
  genAiToolName: "gen_ai.tool.name",
  genAiToolCallId: "gen_ai.tool.call.id",
  genAiToolType: "gen_ai.tool.type",
  genAiConversationId: "gen_ai.conversation.id",
  mcpMethod: "mcp.method.name",
  invocationId: "sciencegate.invocation_id",
  sessionId: "sciencegate.session_id",
  runId: "sciencegate.run_id",
  sourceId: "sciencegate.source_id",
  toolId: "sciencegate.tool_id",
  serverId: "sciencegate.server_id",
  attempt: "sciencegate.attempt",
  attempts: "sciencegate.attempts",
  cacheHit: "sciencegate.cache_hit",
  replayed: "sciencegate.replayed",
  queueWaitMs: "sciencegate.queue_wait_ms",
  rateLimitGroup: "sciencegate.rate_limit.group",
  authorizationId: "sciencegate.authorization_id",
  approvalOutcome: "sciencegate.approval.outcome",
  approvalDecision: "sciencegate.approval.decision",
  approvalResumed: "sciencegate.approval.resumed",
  approvalCardId: "sciencegate.approval.card_id",
  approvalAskedAt: "sciencegate.approval.asked_at",
  downloadJobId: "sciencegate.download.job_id",
  downloadStatus: "sciencegate.download.status",
  downloadBytes: "sciencegate.download.bytes",
  downloadCandidateId: "sciencegate.download.candidate_id",
  offeredBy: "sciencegate.download.mcp_invocation_id",
} as const;

/** Span names before their target is known (the target is added, when recording, with `updateName`). */
export const SPAN_NAMES = {
  /** `Broker.invoke`: one governed call (`sciencegate.invoke <source>/<tool>`). */
  invoke: "sciencegate.invoke",
  /** One MCP request of a call (`tools/call <mcp tool>`), as the MCP semantic conventions name it. */
  toolsCall: "tools/call",
  /** The GenAI tool execution of an executor (`execute_tool <model-visible name>`). */
  executeTool: "execute_tool",
  /** The wait for a rate-limit slot. */
  queueWait: "sciencegate.queue_wait",
  /** One governed download job run. */
  downloadJob: "sciencegate.download_job",
  /** Span event: a human's approval answer or a card raised. */
  approval: "sciencegate.approval",
} as const;

/**
 * Starts a span under the active one. `options` should be a constant: nothing is built per call.
 * @param name the span's (constant) name
 * @param options kind and the attributes samplers see, shared by every call
 * @returns the span; when no SDK is registered, a non-recording one
 */
export function startSpan(name: string, options: SpanOptions): Span {
  return tracer.startSpan(name, options);
}

/**
 * The active span when it records (an executor's, a graph run's), for events of a step that has no
 * span of its own (an approval answer).
 * @returns the span, or undefined when none is active or it does not record
 */
export function recordingActiveSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/**
 * Runs `work` with `span` active, so that spans started inside (ours, the app's HTTP instrumentation)
 * are its children. A span that does not record is not made active: the call runs as it is.
 * @returns what `work` returns
 */
export function withActiveSpan<A extends unknown[], R>(
  span: Span,
  work: (...args: A) => R,
  thisArg: unknown,
  ...args: A
): R {
  if (!span.isRecording()) return work.apply(thisArg, args);
  return context.with(trace.setSpan(context.active(), span), work, thisArg, ...args);
}

/**
 * The low-cardinality `error.type` of a failure: a `GovernanceError`'s code, else the error's class
 * name, else `_OTHER` (the semantic conventions' fallback).
 * @param error anything thrown
 */
export function errorTypeOf(error: unknown): string {
  if (isGovernanceError(error)) return error.code;
  if (error instanceof Error && error.name) return error.name;
  return "_OTHER";
}

/**
 * Marks a span failed (status `ERROR` with the message, `error.type`) when it records. Does not end it.
 * @param span the span
 * @param errorType the `error.type` value (a `GovernanceError` code)
 * @param message the status description
 */
export function setSpanError(span: Span, errorType: string, message: string | undefined): void {
  if (!span.isRecording()) return;
  span.setAttribute(SPAN_ATTRIBUTES.errorType, errorType);
  span.setStatus(
    message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message },
  );
}

/**
 * Ends a span with the failure `error` (see `setSpanError`).
 * @param span the span
 * @param error anything thrown
 */
export function endSpanWithError(span: Span, error: unknown): void {
  setSpanError(span, errorTypeOf(error), error instanceof Error ? error.message : undefined);
  span.end();
}

export type { Attributes, Span, SpanOptions };
/** Span kinds and attribute types, so that layers above need no import of their own. */
export { SpanKind };
