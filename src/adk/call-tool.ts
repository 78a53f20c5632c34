/** `callTool(name, args, ctx)`: one governed call by qualified or bare name. */

import type { McpToolResult } from "../contract/index.js";
import { DEFAULT_SESSION_ID, idOf } from "../core/index.js";
import type { Broker } from "../governance/broker/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import { resolveToolName } from "./tool-resolver.js";
import { currentNodeScope, nodeRunId } from "./tool-use-verified.js";

/** Who is calling: session, run and node (for the `tool_use_verified` gate), idempotency key and cancellation. */
export interface CallToolContext {
  /** A blank string is absent. @default "default" */
  sessionId?: string;
  /** Groups the calls of one run; `toolUseVerified` and `sciencegate verify --run` read it. */
  runId?: string;
  /**
   * The workflow node making the call (its `workflow.json` id): the call counts for that node's
   * `tool_use_verified` gate only, and is recorded under the run id `<runId>#<nodeId>`. Inside a node
   * wrapped with `withToolUseVerified`, the node's id and run id are the defaults.
   */
  nodeId?: string;
  /** With `toolCallId`, the replay key; a blank string is absent. */
  threadId?: string;
  toolCallId?: string;
  signal?: AbortSignal;
}

/** The outcome of {@link CallTool}. */
export interface CallToolOutcome {
  /** What the function returned (local tools), else the normalized MCP result. */
  value: unknown;
  /** The resolved `provider.tool`. */
  qualifiedName: string;
  /** The ledger row of this call. */
  invocationId: string;
  /** The broker's normalized result. */
  result: McpToolResult;
}

/** Calls one tool through the broker by `provider.tool` or an unambiguous bare name. */
export type CallTool = (
  name: string,
  args?: Record<string, unknown>,
  ctx?: CallToolContext,
) => Promise<CallToolOutcome>;

/** Options of {@link createCallTool}. */
export interface CreateCallToolOptions {
  /**
   * The deadline of every call, replacing the tool's own (`createGovernance` passes `science.toml`'s
   * `[run].node_timeout_s`). @default the tool's deadline
   */
  timeoutMs?: number | undefined;
}

/**
 * Builds `callTool` over a broker and its catalog.
 * @param broker the one governed path
 * @param catalog the catalog the broker uses
 * @param options the deadline of every call
 * @returns `callTool(name, args, ctx)`; it rejects with `GovernanceError`: `INVALID_INPUT` (ambiguous name,
 *   bad arguments), `TOOL_UNAVAILABLE` (unknown name, unavailable provider), `TOOL_FAILED` (the tool raised;
 *   the message is its error), `UPSTREAM_UNAVAILABLE` (its server or interpreter failed) and every other
 *   broker code including `TIMEOUT` (past the deadline); each call is a ledger row
 */
export function createCallTool(
  broker: Broker,
  catalog: SourceCatalog,
  options: CreateCallToolOptions = {},
): CallTool {
  return async (name, args = {}, ctx = {}) => {
    const resolved = resolveToolName(catalog, name);
    const scope = currentNodeScope();
    const nodeId = ctx.nodeId ?? scope?.nodeId;
    const runId = ctx.runId ?? scope?.runId;
    const threadId = idOf(ctx.threadId);
    const outcome = await broker.invoke({
      sourceId: resolved.sourceId,
      toolId: resolved.toolId,
      input: args,
      sessionId: idOf(ctx.sessionId) ?? DEFAULT_SESSION_ID,
      ...(runId === undefined ? {} : { runId: nodeId === undefined ? runId : nodeRunId(runId, nodeId) }),
      ...(threadId === undefined ? {} : { threadId }),
      ...(ctx.toolCallId === undefined ? {} : { toolCallId: ctx.toolCallId }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
      timeoutMs: options.timeoutMs,
    });
    if (scope !== undefined && nodeId === scope.nodeId) scope.invocationIds.add(outcome.invocationId);
    return {
      value: localValue(outcome.result) ?? outcome.result,
      qualifiedName: resolved.qualifiedName,
      invocationId: outcome.invocationId,
      result: outcome.result,
    };
  };
}

/** Local tools put the function's return value at `structuredContent.result`. */
function localValue(result: McpToolResult): unknown {
  const structured = result.data?.structuredContent;
  if (typeof structured === "object" && structured !== null && "result" in structured) {
    return (structured as { result: unknown }).result;
  }
  return undefined;
}
