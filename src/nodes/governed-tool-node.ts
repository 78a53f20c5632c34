/**
 * The governed tool node: runs ONE tool call per LangGraph task (see `governedToolsCondition`), asks
 * the approval hook before an MCP call executes, and writes the tool message and any promotion from
 * `tool_search` back to the graph state.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError } from "../core/index.js";
import type { ApprovalHook } from "./approval-hook.js";
import type { GovernedRuntime } from "./execute-tool-call.js";
import { createGovernedRunner, type PrincipalResolver, type SessionIdResolver } from "./governed-runner.js";
import type { GovernedStateUpdate } from "./governed-state.js";
import type { GovernedToolTask } from "./governed-tools-condition.js";
import type { ApprovalCardFormat } from "./hitl-protocol.js";

/** Options of `createGovernedToolNode`. */
export interface GovernedToolNodeOptions {
  /** The governance runtime (`createGovernance`). */
  governance: GovernedRuntime;
  /** The app's own tools (the same list the model node binds). @default [] */
  tools?: readonly StructuredToolInterface[];
  /**
   * Asked before each MCP call that would execute; may `interrupt()`. `false` asks nothing (the broker
   * then refuses a dangerous call that no grant or approval mode covers).
   * @default `createApprovalGate({ governance })` when `governance` is a `createGovernance` runtime that
   *   enforces permissions: a dangerous call pauses the thread with an approval card
   */
  approvalHook?: ApprovalHook | false;
  /**
   * The shape of the default gate's cards: `hitl` (langchain's `HITLRequest`, the native card under
   * `sciencegate`) or `native` (`PermissionCard`); both accept either answer shape. @default "hitl"
   */
  cardFormat?: ApprovalCardFormat;
  /**
   * The governance session of a call, read from each call's config; must match the model node's.
   * @default `configurable.thread_id`, else `"default"` (see `SessionIdResolver`)
   */
  sessionId?: SessionIdResolver;
  /**
   * Who a call is made for, read from each call's config (the authenticated user your server sets;
   * see `PrincipalResolver`): rows carry it, and only its grants, approval mode and quotas apply.
   * @default none: every call is the single user's
   */
  principal?: PrincipalResolver;
}

/**
 * Creates the node that runs one governed tool call. `tool_search` searches and promotes; the app's
 * tools run as they are; an MCP tool runs only when promoted at its current definition and approved,
 * through the broker keyed by `thread_id:toolCallId`, in the session of the call's own config.
 * Failures become `ToolMessage`s with `status: "error"` and a JSON body `{code, message, retryable,
 * ...}`; interrupts propagate. Dangerous calls ask a human through the approval gate by default
 * (compile the graph with a checkpointer); pass `approvalHook: false` to opt out.
 * @param options governance, the app's tools, approval hook, card format, session resolver
 * @returns a node taking a `GovernedToolTask` (sent by `governedToolsCondition`)
 * @throws GovernanceError `INVALID_CONFIG` when the node is reached without a `Send` task
 * @example
 * graph.addNode("tools", createGovernedToolNode({ governance })) // cards on by default
 */
export function createGovernedToolNode(
  options: GovernedToolNodeOptions,
): (task: GovernedToolTask, config: LangGraphRunnableConfig) => Promise<GovernedStateUpdate> {
  const runner = createGovernedRunner(options.governance, options);
  return async (task, config) => {
    if (task?.toolCall === undefined) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "The governed tool node runs one tool call per task: route to it with governedToolsCondition (Send), not a plain edge.",
      );
    }
    const { toolCall } = task;
    const call = { id: toolCall.id ?? `${toolCall.name}:call`, name: toolCall.name, args: toolCall.args };
    const outcome = await runner.run(call, config, task);
    return {
      messages: [outcome.message],
      ...(outcome.promotion === undefined ? {} : { promotion: outcome.promotion }),
    };
  };
}
