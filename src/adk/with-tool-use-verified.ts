/** A LangGraph node wrapper that applies the `tool_use_verified` gate to each invocation of the node. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError, idOf, threadIdOf } from "../core/index.js";
import {
  nodeToolUseVerified,
  runInNodeScope,
  type ToolDeclaration,
  type ToolUseRuntime,
} from "./tool-use-verified.js";

/** Options of {@link withToolUseVerified}. */
export interface ToolUseVerifiedOptions {
  /** The node's declaration (`{id, kind, tools}`); its `id` is the node id the calls are recorded for. */
  declaration: ToolDeclaration;
  /** The ledger and catalog of the governance the node calls through (`createGovernance` returns both). */
  governance: ToolUseRuntime;
  /**
   * The run the calls belong to. @default `configurable.run_id`, else `configurable.thread_id` (each read
   * by `idOf`: a number is its decimal string, a blank string is absent)
   */
  runId?: string | ((config: LangGraphRunnableConfig) => string | undefined);
}

/**
 * Wraps a node so that each of its invocations fails unless it made, itself, at least one successful
 * call of a declared tool. Every `governance.callTool` the node awaits is credited to this invocation
 * and recorded under the run id `<runId>#<declaration.id>`; calls made by other nodes of the run do not
 * count. Errors thrown by the node (including LangGraph interrupts) pass unchanged.
 * @param node the LangGraph node function
 * @param options declaration, governance and run id
 * @returns a node with the same signature
 * @throws GovernanceError `TOOL_UNAVAILABLE` with `data.gate = "tool_use_verified"`, naming the node and
 *   its tools; `INVALID_INPUT` when no run id can be found (before the node runs) or a declared bare name
 *   is ambiguous
 * @example
 * graph.addNode("analyze", withToolUseVerified(analyze, { declaration: { id: "analyze", tools: ["power_law_fit"] }, governance }));
 */
export function withToolUseVerified<S, U>(
  node: (state: S, config: LangGraphRunnableConfig) => U | Promise<U>,
  options: ToolUseVerifiedOptions,
): (state: S, config: LangGraphRunnableConfig) => Promise<U> {
  const { declaration, governance } = options;
  return async (state, config) => {
    const runId = runIdOf(options.runId, config);
    if (runId === undefined) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `tool_use_verified cannot check node '${declaration.id}': no run id (pass runId or configurable.run_id).`,
      );
    }
    const scope = { runId, nodeId: declaration.id, invocationIds: new Set<string>() };
    const update = await runInNodeScope(scope, () => node(state, config));
    const verdict = await nodeToolUseVerified(governance, declaration, scope.invocationIds, runId);
    const failure = verdict.failures[0];
    if (failure) {
      throw new GovernanceError("TOOL_UNAVAILABLE", `tool_use_verified failed: ${failure.message}.`, {
        data: { gate: "tool_use_verified", nodeId: failure.nodeId, tools: failure.tools, runId },
      });
    }
    return update;
  };
}

function runIdOf(
  given: ToolUseVerifiedOptions["runId"],
  config: LangGraphRunnableConfig,
): string | undefined {
  if (given !== undefined) return idOf(typeof given === "function" ? given(config) : given);
  return idOf(config.configurable?.run_id) ?? threadIdOf(config);
}
