/** `callTool(name, args, ctx)`: one governed call by qualified or bare name. */

import type { McpToolResult } from "../contract/index.js";
import type { Broker } from "../governance/broker/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import { resolveToolName } from "./tool-resolver.js";

/** Who is calling: session, run (for the `tool_use_verified` gate), idempotency key and cancellation. */
export interface CallToolContext {
  /** @default "default" */
  session?: string;
  /** Groups the calls of one run; `toolUseVerified` and `sciencegate verify --run` read it. */
  runId?: string;
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

/**
 * Builds `callTool` over a broker and its catalog.
 * @param broker the one governed path
 * @param catalog the catalog the broker uses
 * @returns `callTool(name, args, ctx)`; it rejects with `GovernanceError`: `INVALID_INPUT` (ambiguous name,
 *   bad arguments), `TOOL_UNAVAILABLE` (unknown name, unavailable provider), `TOOL_FAILED` (the tool raised;
 *   the message is its error), `UPSTREAM_UNAVAILABLE` (its server or interpreter failed) and every other
 *   broker code; each call is a ledger row
 */
export function createCallTool(broker: Broker, catalog: SourceCatalog): CallTool {
  return async (name, args = {}, ctx = {}) => {
    const resolved = resolveToolName(catalog, name);
    const outcome = await broker.invoke({
      sourceId: resolved.sourceId,
      toolId: resolved.toolId,
      input: args,
      session: ctx.session ?? "default",
      ...(ctx.runId === undefined ? {} : { runId: ctx.runId }),
      ...(ctx.threadId === undefined ? {} : { threadId: ctx.threadId }),
      ...(ctx.toolCallId === undefined ? {} : { toolCallId: ctx.toolCallId }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });
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
