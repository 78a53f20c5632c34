import { randomUUID } from "node:crypto";
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { isGraphBubbleUp, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { toGovernanceError } from "../contract/index.js";
import {
  SPAN_ATTRIBUTES as A,
  type GovernanceErrorBody,
  SPAN_NAMES,
  type Span,
  SpanKind,
  type SpanOptions,
  setSpanError,
  startSpan,
  toErrorBody,
  withActiveSpan,
} from "../core/index.js";
import { type Broker, type InvokeRequest, isUpstreamPause } from "../governance/broker/index.js";
import { neutralizePromptTags } from "../governance/envelope/index.js";
import type { UpstreamRelay } from "../mcp/index.js";
import type { PromotionState, PromotionUpdate, SurfaceTool } from "../visibility/index.js";
import {
  checkToolCall,
  createToolSearchTool,
  promotionFromToolSearchResult,
  TOOL_SEARCH_NAME,
} from "../visibility/index.js";
import { type ApprovalHook, type ApprovalOutcome, runApprovalHook } from "./approval-hook.js";
import type { ApprovalCardFormat } from "./hitl-protocol.js";
import { toolMessageContent } from "./tool-message-content.js";
import { invokeAnsweringUpstream, type UpstreamTask } from "./upstream-input.js";

/** What graph code needs of a governance runtime (`createGovernance` returns one). */
export interface GovernedRuntime {
  broker: Broker;
  /** The session's governed tools. */
  tools(sessionId: string): SurfaceTool[];
  /** Names the session's sources that are down in `tool_search`'s answer when nothing matched. */
  surface?:
    | {
        /** The ids of the session's sources whose server is down. */
        unavailableSources(sessionId: string): string[];
      }
    | undefined;
}

/** One tool call of a model turn. */
export interface ToolCallLike {
  id?: string | undefined;
  name: string;
  args: Record<string, unknown>;
}

/** Where a call runs. */
export interface ToolCallContext {
  sessionId: string;
  /**
   * Who the call is for (an authenticated user; see `checkPrincipal`): its rows carry it, and only its
   * grants, approval mode, recorded decisions and quotas apply. @default none: the single user
   */
  principal?: string | undefined;
  /** The LangGraph thread (`threadIdOf`); with the call id, the broker's replay key. */
  threadId?: string | undefined;
  runId?: string | undefined;
  /** The promotion state of the run (from graph state). */
  promotion: PromotionState | undefined;
  /** The app's own tools: not deferred, not governed by the broker. */
  builtinTools?: readonly StructuredToolInterface[];
  /**
   * The config the app's own tools are invoked with, for a caller outside a graph task (the gateway:
   * the request's `signal`, a `writer` for their custom-stream events, the thread).
   * @default none: inside a graph task they read the task's own config
   */
  builtinConfig?: LangGraphRunnableConfig | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Asked before an MCP call that would execute (promoted, current), in the caller's graph task; may
   * `interrupt()`. A denial becomes the call's `PERMISSION_DENIED` message and nothing runs.
   */
  approval?: { hook: ApprovalHook; config: LangGraphRunnableConfig } | undefined;
  /**
   * The call's own graph task config: with a checkpointer, what the upstream server asks during the call
   * becomes an interrupt card (see `invokeAnsweringUpstream`), and its progress and log messages go to
   * the task's `custom` stream. @default none: questions are answered `cancel`
   */
  config?: LangGraphRunnableConfig | undefined;
  /** The shape of upstream question cards, as of approval cards. @default "hitl" */
  cardFormat?: ApprovalCardFormat | undefined;
  /**
   * For a caller outside a graph that answers at once (the gateway relays to its own client): the
   * server's elicitations, sampling requests and log messages go here instead of to cards.
   */
  upstream?: UpstreamRelay | undefined;
  /**
   * With `upstream`, for a caller that continues some questions in a later request (the gateway's
   * 2026-07-28 face, see `UpstreamTask.resumable`): the broker's pause is thrown, not turned into a
   * message. @default none
   */
  resumable?: UpstreamTask["resumable"];
  /** The server's progress notifications of the call (the gateway relays them). */
  onProgress?: InvokeRequest["onProgress"];
}

/** The outcome of one call: the message for the model, and a promotion update for `tool_search`. */
export interface ToolCallOutcome {
  message: ToolMessage;
  promotion?: PromotionUpdate;
}

/**
 * Runs one tool call the governed way: `tool_search` searches and promotes; the app's own tools run
 * as they are; an MCP tool runs only when promoted and not stale (else a retryable "search first"
 * error and nothing executes), through `Broker.invoke` keyed by `threadId:toolCallId`, so a resumed
 * task never runs a finished call twice. With `context.approval`, the hook is asked first (the
 * approval gate raises one card per dangerous call, before any side effect), and an approval
 * that edited the arguments runs the edited call. A result's message carries one compact text for the
 * model (`toolMessageContent`: `toolResultText`, the invocation id, citation labels, content scopes, warnings, paging) and the
 * whole `InvokeOutcome` as its `artifact` for code. Failures become `ToolMessage`s with `status:
 * "error"` and a JSON body `{code, message, retryable, ...}`; a refusal before the broker (unknown or
 * unpromoted tool, an approval step that said no) is audited with `Broker.recordRefusal`, so every
 * error the model sees has a ledger row. LangGraph control flow (interrupts) is rethrown, and so is the
 * broker's pause for upstream input when the caller continues it (`context.resumable`).
 * @param runtime the broker and the session's tools
 * @param call the tool call
 * @param context session, thread, run, promotion state and the app's tools
 */
export async function executeGovernedToolCall(
  runtime: GovernedRuntime,
  call: ToolCallLike,
  context: ToolCallContext,
): Promise<ToolCallOutcome> {
  const toolCallId = call.id ?? randomUUID();
  const span = startSpan(SPAN_NAMES.executeTool, EXECUTE_TOOL_SPAN_OPTIONS);
  if (span.isRecording()) describeToolCall(span, call.name, toolCallId, context);
  try {
    // Active while the call runs: the approval step's events and the broker's span land under it.
    return await withActiveSpan(span, runToolCall, undefined, runtime, call, toolCallId, context, span);
  } finally {
    span.end();
  }
}

/**
 * The GenAI `execute_tool` span of an executor (semantic conventions for GenAI tool execution), whose
 * name gets the model-visible tool name when it records.
 */
const EXECUTE_TOOL_SPAN_OPTIONS: SpanOptions = Object.freeze({
  kind: SpanKind.INTERNAL,
  attributes: Object.freeze({ [A.genAiOperation]: "execute_tool" }),
});

function describeToolCall(span: Span, name: string, toolCallId: string, context: ToolCallContext): void {
  span.updateName(`${SPAN_NAMES.executeTool} ${name}`);
  span.setAttribute(A.genAiToolName, name);
  span.setAttribute(A.genAiToolCallId, toolCallId);
  span.setAttribute(A.sessionId, context.sessionId);
  if (context.threadId !== undefined) span.setAttribute(A.genAiConversationId, context.threadId);
  if (context.runId !== undefined) span.setAttribute(A.runId, context.runId);
}

async function runToolCall(
  runtime: GovernedRuntime,
  call: ToolCallLike,
  toolCallId: string,
  context: ToolCallContext,
  span: Span,
): Promise<ToolCallOutcome> {
  const tools = runtime.tools(context.sessionId);
  const traced = span.isRecording();
  try {
    if (call.name === TOOL_SEARCH_NAME) {
      if (traced) span.setAttribute(A.genAiToolType, "function");
      const search = createToolSearchTool({
        getTools: () => tools,
        getUnavailableSources: () => runtime.surface?.unavailableSources(context.sessionId) ?? [],
      });
      const message = (await search.invoke({ ...call, id: toolCallId, type: "tool_call" })) as ToolMessage;
      return { message, promotion: promotionFromToolSearchResult(message, tools) };
    }
    const builtin = context.builtinTools?.find((t) => t.name === call.name);
    if (builtin) {
      if (traced) span.setAttribute(A.genAiToolType, "function");
      const message = (await builtin.invoke(
        { ...call, id: toolCallId, type: "tool_call" },
        context.builtinConfig,
      )) as ToolMessage;
      return { message };
    }
    const refused = checkToolCall(call.name, context.promotion, tools);
    const known = tools.find((t) => t.name === call.name);
    const refuse = async (body: GovernanceErrorBody): Promise<ToolCallOutcome> => {
      await runtime.broker.recordRefusal(
        {
          ...(known ? { sourceId: known.sourceId, toolId: known.toolId } : unknownToolIds(call.name)),
          input: call.args,
          sessionId: context.sessionId,
          principal: context.principal,
          toolCallId,
          ...(context.threadId === undefined ? {} : { threadId: context.threadId }),
          ...(context.runId === undefined ? {} : { runId: context.runId }),
        },
        body,
      );
      setSpanError(span, body.code, body.message);
      return { message: errorMessage(call.name, toolCallId, body) };
    };
    if (refused) return await refuse(refused);
    const tool = known as SurfaceTool;
    if (traced) {
      span.setAttribute(A.genAiToolType, "extension");
      span.setAttribute(A.sourceId, tool.sourceId);
      span.setAttribute(A.toolId, tool.toolId);
    }
    let args = call.args;
    if (context.approval) {
      let approved: ApprovalOutcome;
      try {
        approved = await runApprovalHook(
          context.approval.hook,
          {
            name: call.name,
            toolCallId,
            args: call.args,
            tool,
            sessionId: context.sessionId,
            principal: context.principal,
            ...(context.threadId === undefined ? {} : { threadId: context.threadId }),
            ...(context.runId === undefined ? {} : { runId: context.runId }),
          },
          context.approval.config,
        );
      } catch (error) {
        // Paused for a human: this run of the task ends here; the resumed run is a new span.
        if (traced && isGraphInterrupt(error)) span.setAttribute(A.approvalOutcome, "interrupted");
        throw error;
      }
      if (traced) span.setAttribute(A.approvalOutcome, approvalOutcomeOf(approved, call.args));
      if (!approved.allowed) return await refuse(approved.body);
      // A human's edit: the broker validates these arguments and runs them, keyed like the original.
      args = approved.args;
    }
    const outcome = await invokeAnsweringUpstream(
      runtime.broker,
      {
        sourceId: tool.sourceId,
        toolId: tool.toolId,
        input: args,
        sessionId: context.sessionId,
        principal: context.principal,
        toolCallId,
        ...(context.threadId !== undefined ? { threadId: context.threadId } : {}),
        ...(context.runId !== undefined ? { runId: context.runId } : {}),
        ...(context.signal !== undefined ? { signal: context.signal } : {}),
        ...(context.onProgress !== undefined ? { onProgress: context.onProgress } : {}),
      },
      {
        config: context.config,
        call: { name: call.name, sourceId: tool.sourceId, toolId: tool.toolId, toolCallId },
        cardFormat: context.cardFormat,
        relay: context.upstream,
        resumable: context.resumable,
      },
    );
    if (traced) span.setAttribute(A.invocationId, outcome.invocationId);
    return {
      message: new ToolMessage({
        tool_call_id: toolCallId,
        name: call.name,
        content: toolMessageContent(outcome.invocationId, outcome.result),
        artifact: outcome,
      }),
    };
  } catch (error) {
    if (isGraphBubbleUp(error)) throw error;
    if (context.resumable !== undefined && isUpstreamPause(error)) throw error;
    // Broker failures are GovernanceErrors already; anything else was thrown by the app's own tool
    // (or tool_search), so without a structured signal it is that tool's failure, not an upstream's.
    const failure = toGovernanceError(error, { unrecognized: "TOOL_FAILED" });
    if (traced && typeof failure.data?.invocationId === "string") {
      span.setAttribute(A.invocationId, failure.data.invocationId);
    }
    setSpanError(span, failure.code, failure.message);
    return { message: errorMessage(call.name, toolCallId, toErrorBody(failure)) };
  }
}

/**
 * How the approval step ended, for the executor's span: `passed` (on to the broker's permission hook,
 * which applies a recorded decision, a grant or the session mode), `edited` (a human changed the
 * arguments) or `denied` (the call is refused before the broker).
 */
function approvalOutcomeOf(approved: ApprovalOutcome, modelArgs: Record<string, unknown>): string {
  if (!approved.allowed) return "denied";
  return approved.args === modelArgs ? "passed" : "edited";
}

/**
 * An error as the model reads it. Its message and data may quote the caller's text (a tool name, an
 * argument) or an app tool's, so the whole text is made inert as a result's text is.
 */
function errorMessage(name: string, toolCallId: string, body: GovernanceErrorBody): ToolMessage {
  const content = neutralizePromptTags(JSON.stringify(body));
  return new ToolMessage({ tool_call_id: toolCallId, name, status: "error", content });
}

/** The source and tool an unknown `mcp__<source>__<tool>` name points at, for its refusal row. */
function unknownToolIds(name: string): { sourceId: string; toolId: string } {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match
    ? { sourceId: match[1] as string, toolId: match[2] as string }
    : { sourceId: "unknown", toolId: name };
}
