/**
 * The router after the model node: one LangGraph `Send` task per tool call, so parallel calls run
 * concurrently, each can interrupt (and resume) on its own, and one failure cancels nothing else.
 */
import { AIMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { END, Send } from "@langchain/langgraph";
import type { PromotionState } from "../visibility/index.js";

/** The name `governedToolsCondition` sends tool calls to. */
export const GOVERNED_TOOLS_NODE = "tools";

/** The input of one governed tool task: the call, and the run's promotions when the model made it. */
export interface GovernedToolTask {
  toolCall: ToolCall;
  promotion?: PromotionState;
  runId?: string;
}

/** The state the router reads. */
export interface ToolRoutingState {
  messages: BaseMessage[];
  promotion?: PromotionState;
  runId?: string | undefined;
}

/**
 * Builds a router that sends each tool call of the last AI message to `toolsNode`.
 * The tool messages reach the conversation in the model's order: LangGraph applies the writes of a
 * step's `Send` tasks in task order (zero-padded indices), whatever order they finish in.
 * @param toolsNode the node that runs one call (`createGovernedToolNode`) @default "tools"
 * @returns `(state) => Send[] | END`, for `addConditionalEdges(model, router, [toolsNode, END])`
 */
export function createGovernedToolsCondition(
  toolsNode: string = GOVERNED_TOOLS_NODE,
): (state: ToolRoutingState) => Send[] | typeof END {
  return (state) => {
    const last = state.messages.at(-1);
    if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return END;
    return last.tool_calls.map((call, index) => {
      // A stable id keeps the broker's threadId:toolCallId replay working for models that omit ids.
      const toolCall: ToolCall = { ...call, id: call.id ?? `${last.id ?? "ai"}:${index}` };
      const task: GovernedToolTask = { toolCall };
      if (state.promotion !== undefined) task.promotion = state.promotion;
      if (state.runId !== undefined) task.runId = state.runId;
      return new Send(toolsNode, task);
    });
  };
}

/**
 * The router for a tool node named `"tools"`: one `Send` per tool call of the last AI message, or
 * `END` when it has none.
 * @param state the graph state (messages, promotion, runId)
 * @returns the tasks, or `END`
 * @example
 * graph.addConditionalEdges("agent", governedToolsCondition, ["tools", END]).addEdge("tools", "agent")
 */
export const governedToolsCondition: (state: ToolRoutingState) => Send[] | typeof END =
  createGovernedToolsCondition();
