/**
 * `tool_search` as a `GovernedStructuredTool`: the same name, description and schema as the
 * visibility layer's tool, executed by a governed runner (which applies the promotion it returns).
 */
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { GovernedRuntime } from "../nodes/index.js";
import { createToolSearchTool, TOOL_SEARCH_NAME } from "../visibility/index.js";
import { GovernedStructuredTool, type GovernedToolRunner } from "./governed-structured-tool.js";

/**
 * Creates the governed `tool_search` tool of one session.
 * @param governance the runtime whose session tools are searched
 * @param sessionId the session
 * @param run the runner (normally `executeGovernedToolCall` with the run's promotion state)
 * @returns the tool, named `tool_search`
 */
export function createGovernedToolSearch(
  governance: GovernedRuntime,
  sessionId: string,
  run: GovernedToolRunner,
): GovernedStructuredTool {
  const search = createToolSearchTool({ getTools: () => governance.tools(sessionId) });
  return new GovernedStructuredTool({
    name: TOOL_SEARCH_NAME,
    description: search.description,
    schema: toJsonSchema(search.schema) as Record<string, unknown>,
    run,
  });
}
