/**
 * The governed tool node: runs ONE tool call per LangGraph task (see `governedToolsCondition`), asks
 * the approval hook before an MCP call executes, and writes the tool message and any promotion from
 * `tool_search` back to the graph state.
 */
import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError, sessionIdOf, threadIdOf } from "../core/index.js";
import type { SurfaceTool } from "../visibility/index.js";
import { checkToolCall, TOOL_SEARCH_NAME } from "../visibility/index.js";
import { type ApprovalHook, runApprovalHook } from "./approval-hook.js";
import {
  executeGovernedToolCall,
  type GovernedRuntime,
  type SessionIdResolver,
  type ToolCallContext,
} from "./execute-tool-call.js";
import type { GovernedStateUpdate } from "./governed-state.js";
import type { GovernedToolTask } from "./governed-tools-condition.js";

/** Options of `createGovernedToolNode`. */
export interface GovernedToolNodeOptions {
  /** The governance runtime (`createGovernance`). */
  governance: GovernedRuntime;
  /** The app's own tools (the same list the model node binds). @default [] */
  builtinTools?: readonly StructuredToolInterface[];
  /** Asked before each MCP call that would execute; may `interrupt()`. @default none: nothing is asked */
  approvalHook?: ApprovalHook;
  /**
   * The governance session of a call; must match the model node's. @default `configurable.thread_id`,
   * else `"default"` (see `sessionIdOf`)
   */
  sessionId?: SessionIdResolver;
}

/**
 * Creates the node that runs one governed tool call. `tool_search` searches and promotes; the app's
 * tools run as they are; an MCP tool runs only when promoted at its current definition and approved,
 * through the broker keyed by `thread_id:toolCallId`. Failures become `ToolMessage`s with `status:
 * "error"` and a JSON body `{code, message, retryable, ...}`; interrupts propagate.
 * @param options governance, the app's tools, approval hook, session resolver
 * @returns a node taking a `GovernedToolTask` (sent by `governedToolsCondition`)
 * @throws GovernanceError `INVALID_CONFIG` when the node is reached without a `Send` task
 * @example
 * graph.addNode("tools", createGovernedToolNode({ governance, approvalHook }))
 */
export function createGovernedToolNode(
  options: GovernedToolNodeOptions,
): (task: GovernedToolTask, config: LangGraphRunnableConfig) => Promise<GovernedStateUpdate> {
  const { governance, approvalHook } = options;
  const builtinTools = options.builtinTools ?? [];
  return async (task, config) => {
    if (task?.toolCall === undefined) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        "The governed tool node runs one tool call per task: route to it with governedToolsCondition (Send), not a plain edge.",
      );
    }
    const { toolCall } = task;
    const call = { id: toolCall.id ?? `${toolCall.name}:call`, name: toolCall.name, args: toolCall.args };
    const sessionId = sessionIdOf(config, options.sessionId);
    const threadId = threadIdOf(config);
    const context: ToolCallContext = {
      sessionId,
      promotion: task.promotion,
      builtinTools,
      threadId,
      runId: task.runId,
      signal: config.signal,
    };
    const tool = approvalHook ? approvableTool(call.name, context, governance, builtinTools) : undefined;
    if (approvalHook && tool) {
      const denied = await runApprovalHook(
        approvalHook,
        {
          name: call.name,
          toolCallId: call.id,
          args: call.args,
          tool,
          sessionId,
          ...(threadId === undefined ? {} : { threadId }),
          ...(task.runId === undefined ? {} : { runId: task.runId }),
        },
        config,
      );
      if (denied) {
        const content = JSON.stringify(denied);
        return {
          messages: [new ToolMessage({ tool_call_id: call.id, name: call.name, status: "error", content })],
        };
      }
    }
    const outcome = await executeGovernedToolCall(governance, call, context);
    return {
      messages: [outcome.message],
      ...(outcome.promotion === undefined ? {} : { promotion: outcome.promotion }),
    };
  };
}

/** Only an MCP call that would really execute is worth asking about; refusals need no approval. */
function approvableTool(
  name: string,
  context: ToolCallContext,
  governance: GovernedRuntime,
  builtinTools: readonly StructuredToolInterface[],
): SurfaceTool | undefined {
  if (name === TOOL_SEARCH_NAME || builtinTools.some((tool) => tool.name === name)) return undefined;
  const tools = governance.tools(context.sessionId);
  if (checkToolCall(name, context.promotion, tools) !== undefined) return undefined;
  return tools.find((tool) => tool.name === name);
}
