/** A LangGraph node wrapper that applies the `tool_use_verified` gate when the node completes. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError } from "../core/index.js";
import type { Ledger } from "../governance/audit/index.js";
import { type ToolDeclaration, toolUseVerified } from "./tool-use-verified.js";

/** Options of {@link withToolUseVerified}. */
export interface ToolUseVerifiedOptions {
  /** The node's declaration (`{id, kind, tools}`). */
  declaration: ToolDeclaration;
  /** The broker's ledger. */
  ledger: Ledger;
  /** The run whose calls count. @default `config.configurable.run_id`, else `config.configurable.thread_id` */
  runId?: string | ((config: LangGraphRunnableConfig) => string | undefined);
}

/**
 * Wraps a node so that, once it returns, it fails unless it made at least one successful call of a
 * declared tool in the run. Errors thrown by the node (including LangGraph interrupts) pass unchanged.
 * @param node the LangGraph node function
 * @param options declaration, ledger and run id
 * @returns a node with the same signature
 * @throws GovernanceError `TOOL_UNAVAILABLE` with `data.gate = "tool_use_verified"`, naming the node and
 *   its tools; `INVALID_INPUT` when no run id can be found
 * @example
 * graph.addNode("analyze", withToolUseVerified(analyze, { declaration: { id: "analyze", tools: ["power_law_fit"] }, ledger }));
 */
export function withToolUseVerified<S, U>(
  node: (state: S, config: LangGraphRunnableConfig) => U | Promise<U>,
  options: ToolUseVerifiedOptions,
): (state: S, config: LangGraphRunnableConfig) => Promise<U> {
  return async (state, config) => {
    const update = await node(state, config);
    const runId = runIdOf(options.runId, config);
    if (runId === undefined) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `tool_use_verified cannot check node '${options.declaration.id}': no run id (pass runId or configurable.run_id).`,
      );
    }
    const verdict = await toolUseVerified(options.ledger, runId, [options.declaration]);
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
  if (typeof given === "string") return given;
  if (typeof given === "function") return given(config);
  const configurable = config.configurable ?? {};
  const value = configurable.run_id ?? configurable.thread_id;
  return typeof value === "string" && value !== "" ? value : undefined;
}
