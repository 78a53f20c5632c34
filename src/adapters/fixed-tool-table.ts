/**
 * Tool tables for executors that freeze their tools when a run starts: a swarm agent,
 * `createReactAgent`, or anything that binds its tools once. Such an executor cannot bind a tool
 * that `tool_search` promotes mid-run, so every deferred tool of the session is promoted up front;
 * `tool_search` stays, because it is how the model reads a schema again after a definition changed.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { threadIdOf } from "../core/index.js";
import {
  type ApprovalCardFormat,
  type ApprovalHookOption,
  executeGovernedToolCall,
  resolveApprovalHook,
} from "../nodes/index.js";
import { type PromotionState, promote, promotionReducer } from "../visibility/index.js";
import { type ArtifactBuiltinsRuntime, createArtifactBuiltins } from "./artifact-builtins.js";
import { type GovernedToolRunner, toGovernedStructuredTool } from "./governed-structured-tool.js";
import { createGovernedToolSearch } from "./governed-tool-search.js";

/** Options of `prepareFixedToolTable`. */
export interface FixedToolTableOptions {
  /**
   * Asked before each MCP call that would execute, inside the tool's graph task; may `interrupt()`.
   * `false` asks nothing (the broker then refuses a dangerous call that no grant or approval mode
   * covers). @default `createApprovalGate(governance)` when `governance` is a `createGovernance`
   * runtime that enforces permissions: a dangerous call pauses the run with an approval card
   */
  approvalHook?: ApprovalHookOption;
  /**
   * The shape of the default approval cards (MCP calls and downloads): `native` (`PermissionCard`) or `hitl` (langchain's
   * `HITLRequest`, card under `sciencegate`); both accept either answer shape. @default "native"
   */
  cardFormat?: ApprovalCardFormat | undefined;
  /**
   * Adds `artifact_download` (with its own approval card) and `paper_extract_pdf` when the runtime
   * has `downloads`. @default when one of the runtime's sources can offer a download (an
   *   `artifact-plan` tool)
   */
  artifactTools?: boolean;
  /** Where `paper_extract_pdf` writes `papers/<jobId>/`. @default the runtime's data directory */
  dataDir?: string;
}

/**
 * The tools of one session for a fixed-table executor: `tool_search` first, then every deferred
 * (MCP) tool of the session with its model-visible name, composed description and input schema,
 * then `artifact_download` and `paper_extract_pdf` when the runtime has governed downloads.
 * Each call runs through `executeGovernedToolCall`, so through the broker (validation, permission,
 * cache, rate limits, ledger keyed by `thread_id:toolCallId`), with the config's `thread_id` as the
 * thread. Everything is promoted at the definitions it had when the table was built: if a tool's
 * definition changes later, a call gets the retryable "search first" error until `tool_search`
 * shows the model the new schema, which promotes it again for this table. A dangerous call asks a
 * human through the approval gate (one card per call) when the tool runs inside a graph with a
 * checkpointer; give the executor one task per tool call (`createReactAgent({version: "v2"})`, or a
 * `ToolNode` reached through `Send`) so parallel calls get independent cards.
 * @param governance the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)
 * @param sessionId the session whose enabled sources make up the table
 * @param options approval hook, artifact built-ins and their data directory
 * @returns the tools, ready for `createReactAgent({tools: [...table, ...appTools]})`
 * @throws GovernanceError `DUPLICATE_ID` when two catalog tools share a model-visible name
 * @example
 * const tools = prepareFixedToolTable(governance, "session-1");
 * const agent = createReactAgent({ llm, tools: [...tools, createHandoffTool({ agentName: "writer" })], name: "researcher" });
 */
export function prepareFixedToolTable(
  governance: ArtifactBuiltinsRuntime,
  sessionId: string,
  options: FixedToolTableOptions = {},
): StructuredToolInterface[] {
  const approvalHook = resolveApprovalHook(governance, options.approvalHook, options.cardFormat);
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
      ...(approvalHook ? { approval: { hook: approvalHook, config: config ?? {} } } : {}),
    });
    if (outcome.promotion) promotion = promotionReducer(promotion, outcome.promotion);
    return outcome.message;
  };
  return [
    createGovernedToolSearch(governance, sessionId, run),
    ...deferred.map((tool) => toGovernedStructuredTool(tool, run)),
    ...createArtifactBuiltins(governance, {
      artifactTools: options.artifactTools,
      dataDir: options.dataDir,
      sessionId: () => sessionId,
      cardFormat: options.cardFormat,
    }),
  ];
}
