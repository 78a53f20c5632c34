/**
 * What the model may call this turn: tools that are not deferred, plus deferred tools
 * promoted at their current definition. Anything else is refused with a "search first" error before
 * it reaches the broker, so nothing is executed.
 */
import { GovernanceError, type GovernanceErrorBody, toErrorBody } from "../core/index.js";
import { neutralizePromptTags } from "../governance/envelope/index.js";
import { isPromoted, type PromotionState } from "./promotion.js";
import type { SurfaceTool } from "./surface-tool.js";

/** A tool schema to bind to the model. */
export interface VisibleToolSchema {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Why a deferred tool cannot be called yet. */
export type SearchFirstReason = "not_promoted" | "stale";

/**
 * The tools the model may call this turn.
 * @param tools the session's tools (deferred and built-in)
 * @param state the promotion state
 * @returns non-deferred tools and promoted, non-stale deferred tools, in the given order
 */
export function visibleTools(
  tools: readonly SurfaceTool[],
  state: PromotionState | undefined,
): SurfaceTool[] {
  return tools.filter((tool) => isPromoted(state, tool));
}

/**
 * The schemas to bind to the model this turn (`tool_search` itself is the caller's to add).
 * @param tools the session's tools
 * @param state the promotion state
 * @returns name, composed description and input schema of each visible tool
 */
export function visibleToolSchemas(
  tools: readonly SurfaceTool[],
  state: PromotionState | undefined,
): VisibleToolSchema[] {
  return visibleTools(tools, state).map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
}

/**
 * Whether a call to `name` may run now.
 * @param name the model-visible name the model called
 * @param state the promotion state
 * @param tools the session's tools
 * @returns true for a known tool that is not deferred or is promoted at its current definition
 */
export function isCallable(
  name: string,
  state: PromotionState | undefined,
  tools: readonly SurfaceTool[],
): boolean {
  const tool = tools.find((t) => t.name === name);
  return tool !== undefined && isPromoted(state, tool);
}

/**
 * The error body for a call to a deferred tool whose schema the model has not loaded.
 * @param name the model-visible name
 * @param reason `not_promoted` (never searched this run) or `stale` (definition changed since)
 * @returns `{code: "TOOL_UNAVAILABLE", message, retryable: true, attempts: 0, data: {reason, name}}`
 */
export function searchFirstError(
  name: string,
  reason: SearchFirstReason = "not_promoted",
): GovernanceErrorBody {
  const why =
    reason === "stale"
      ? `The definition of tool '${name}' changed since it was loaded`
      : `Tool '${name}' is deferred and its schema is not loaded yet`;
  const message = `${why}, so nothing was executed: call tool_search first (e.g. select:${name}), then call '${name}' again with arguments that match the schema it returns.`;
  return toErrorBody(
    new GovernanceError("TOOL_UNAVAILABLE", message, { retryable: true, data: { reason, name } }),
  );
}

/**
 * Checks a tool call against the surface before anything runs.
 * @param name the called name
 * @param state the promotion state
 * @param tools the session's tools
 * @returns `undefined` when the call may run; otherwise the error body to return to the model:
 *   `TOOL_UNAVAILABLE` retryable (`not_promoted` / `stale`), or not retryable (`unknown_tool`) for a
 *   name that is not in the session's surface at all (disabled source, unavailable or misspelt tool)
 */
export function checkToolCall(
  name: string,
  state: PromotionState | undefined,
  tools: readonly SurfaceTool[],
): GovernanceErrorBody | undefined {
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    // The name is the caller's text: echoed inert, as it is read by the model.
    const shown = neutralizePromptTags(name);
    const message = `No tool '${shown}' is available in this session (unknown name, unavailable tool or disabled source). Use tool_search to find the tools that exist.`;
    return toErrorBody(
      new GovernanceError("TOOL_UNAVAILABLE", message, { data: { reason: "unknown_tool", name: shown } }),
    );
  }
  if (isPromoted(state, tool)) return undefined;
  const promoted = state?.promoted ?? {};
  return searchFirstError(name, Object.hasOwn(promoted, name) ? "stale" : "not_promoted");
}
