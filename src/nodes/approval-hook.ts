/**
 * The approval step of the governed tool node. It runs before an MCP call executes,
 * in the call's own task, so a hook that calls LangGraph's `interrupt()` pauses only that call and,
 * on resume, runs again before any side effect. The permissions layer fills it in.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { isGraphBubbleUp } from "@langchain/langgraph";
import { GovernanceError, type GovernanceErrorBody, toErrorBody } from "../core/index.js";
import type { SurfaceTool } from "../visibility/index.js";

/** What the hook is asked about one MCP call. */
export interface ApprovalRequest {
  /** Model-visible name, e.g. `mcp__pubmed__search`. */
  name: string;
  toolCallId: string;
  /** The arguments as the model gave them (the broker validates them after approval). */
  args: Record<string, unknown>;
  /** The tool as the session sees it (source, tool id, read-only flag, definition hash). */
  tool: SurfaceTool;
  sessionId: string;
  /** Who the call is for (see `ToolCallContext.principal`); a card answered for it is this principal's. */
  principal?: string | undefined;
  threadId?: string;
  runId?: string;
}

/**
 * The hook's answer; `undefined` (no answer) allows the call. `args` runs the call with other
 * arguments (a human edited them); the executor passes them to the broker, which validates them. A
 * denial's `data` joins the `PERMISSION_DENIED` body's `data` (e.g. how to approve the call).
 */
export type ApprovalHookResult =
  | { allowed: true; args?: Record<string, unknown> }
  | { allowed: false; reason: string; data?: Record<string, unknown> | undefined };

/** What `runApprovalHook` concluded: the call runs (with these arguments) or is refused. */
export type ApprovalOutcome =
  | { allowed: true; args: Record<string, unknown> }
  | { allowed: false; body: GovernanceErrorBody };

/** Approves or denies an MCP call; may call `interrupt()` to ask a person. */
export type ApprovalHook = (
  request: ApprovalRequest,
  config: LangGraphRunnableConfig,
) => ApprovalHookResult | undefined | Promise<ApprovalHookResult | undefined>;

/**
 * Runs the hook. LangGraph control flow (an `interrupt()` in the hook) propagates; any other throw
 * counts as a denial, so a broken hook fails closed.
 * @param hook the app's hook
 * @param request the call
 * @param config the node's config
 * @returns the arguments the call runs with (the model's, or the human's edit), else the
 *   `PERMISSION_DENIED` body for the model
 */
export async function runApprovalHook(
  hook: ApprovalHook,
  request: ApprovalRequest,
  config: LangGraphRunnableConfig,
): Promise<ApprovalOutcome> {
  let decision: ApprovalHookResult | undefined;
  try {
    decision = await hook(request, config);
  } catch (error) {
    if (isGraphBubbleUp(error)) throw error;
    decision = {
      allowed: false,
      reason: `the approval step failed: ${String((error as Error)?.message ?? error)}`,
    };
  }
  if (decision === undefined) return { allowed: true, args: request.args };
  if (decision.allowed) return { allowed: true, args: decision.args ?? request.args };
  const message = `Call to ${request.name} was not approved: ${decision.reason}. Nothing was executed.`;
  const body = toErrorBody(
    new GovernanceError("PERMISSION_DENIED", message, {
      data: { ...decision.data, name: request.name, toolCallId: request.toolCallId },
    }),
  );
  return { allowed: false, body };
}
