/**
 * Tool tables for executors that freeze their tools when a run starts: a swarm agent,
 * `createReactAgent`, or anything that binds its tools once. Such an executor cannot bind a tool
 * that `tool_search` promotes mid-run, so every deferred tool of the session is promoted up front;
 * `tool_search` stays, because it is how the model reads a schema again after a definition changed.
 */
import { threadIdOf } from "../core/index.js";
import { executeGovernedToolCall, type GovernedRuntime } from "../nodes/index.js";
import { type PromotionState, promote, promotionReducer } from "../visibility/index.js";
import {
  type GovernedStructuredTool,
  type GovernedToolRunner,
  toGovernedStructuredTool,
} from "./governed-structured-tool.js";
import { createGovernedToolSearch } from "./governed-tool-search.js";

/**
 * The tools of one session for a fixed-table executor: `tool_search` first, then every deferred
 * (MCP) tool of the session with its model-visible name, composed description and input schema.
 * Each call runs through `executeGovernedToolCall`, so through the broker (validation, permission,
 * cache, rate limits, ledger keyed by `thread_id:toolCallId`), with the config's `thread_id` as the
 * thread. Everything is promoted at the definitions it had when the table was built: if a tool's
 * definition changes later, a call gets the retryable "search first" error until `tool_search`
 * shows the model the new schema, which promotes it again for this table.
 * @param governance the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)
 * @param sessionId the session whose enabled sources make up the table
 * @returns the tools, ready for `createReactAgent({tools: [...table, ...appTools]})`
 * @throws GovernanceError `DUPLICATE_ID` when two catalog tools share a model-visible name
 * @example
 * const tools = prepareFixedToolTable(governance, "session-1");
 * const agent = createReactAgent({ llm, tools: [...tools, createHandoffTool({ agentName: "writer" })], name: "researcher" });
 */
export function prepareFixedToolTable(
  governance: GovernedRuntime,
  sessionId: string,
): GovernedStructuredTool[] {
  const tools = governance.tools(sessionId);
  const deferred = tools.filter((tool) => tool.deferred);
  // One table, one promotion state: tool_search calls of the table's runs re-promote changed tools.
  let promotion: PromotionState = promotionReducer(
    undefined,
    promote(
      deferred.map((tool) => tool.name),
      tools,
    ),
  );
  const run: GovernedToolRunner = async (call, config) => {
    const outcome = await executeGovernedToolCall(governance, call, {
      sessionId,
      promotion,
      threadId: threadIdOf(config),
      signal: config?.signal,
    });
    if (outcome.promotion) promotion = promotionReducer(promotion, outcome.promotion);
    return outcome.message;
  };
  return [
    createGovernedToolSearch(governance, sessionId, run),
    ...deferred.map((tool) => toGovernedStructuredTool(tool, run)),
  ];
}
