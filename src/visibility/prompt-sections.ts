/**
 * System-prompt sections about deferred tools: the catalog (within a token budget),
 * keyword routing hints and the notice of changed tools. Each lists only what the model has not
 * loaded, so a promoted tool stops costing prompt tokens twice.
 */
import { neutralizePromptTags } from "../governance/envelope/index.js";
import { type DeferredToolsSectionOptions, renderDeferredToolsSection } from "./deferred-tools-section.js";
import { isPromoted, type PromotionState, type StaleTool } from "./promotion.js";
import type { SurfaceTool } from "./surface-tool.js";

/**
 * The `<available-deferred-tools>` section: the deferred tools that are not promoted (or are
 * stale), within a token budget — each with its one-line summary when they all fit, else by name,
 * else one line per source (see `renderDeferredToolsSection`).
 * @param tools the session's tools
 * @param state the promotion state
 * @param options the token budget and counter
 * @returns the section, or `""` when every deferred tool is loaded (or there are none)
 * @throws GovernanceError `INVALID_CONFIG` when the budget is not a positive number
 */
export function deferredToolsPromptSection(
  tools: readonly SurfaceTool[],
  state: PromotionState | undefined,
  options: DeferredToolsSectionOptions = {},
): string {
  const hidden = tools.filter((tool) => tool.deferred && !isPromoted(state, tool));
  return renderDeferredToolsSection(hidden, options).text;
}

/**
 * The `<mcp_routing_hints>` section: for each deferred `prefer` tool not yet promoted, the words
 * that should make the model reach for it.
 * @param tools the session's tools
 * @param state the promotion state
 * @returns the section, or `""` when no such tool has keywords
 */
export function routingHintsSection(
  tools: readonly SurfaceTool[],
  state: PromotionState | undefined,
): string {
  const hinted = tools.filter(
    (tool) =>
      tool.deferred &&
      tool.routing.mode === "prefer" &&
      tool.routing.keywords.length > 0 &&
      !isPromoted(state, tool),
  );
  if (hinted.length === 0) return "";
  const lines = hinted
    .sort((a, b) => b.routing.priority - a.routing.priority || (a.name < b.name ? -1 : 1))
    .map((tool) => `- ${neutralizePromptTags(tool.routing.keywords.join(", "))} -> ${tool.name}`);
  return [
    "<mcp_routing_hints>",
    "When a request mentions these words, prefer the tool on the right (load it with tool_search select:<name>).",
    ...lines,
    "</mcp_routing_hints>",
  ].join("\n");
}

/**
 * The notice of promoted tools whose definition changed (see `staleTools`).
 * @param stale the stale tools
 * @returns an `<mcp_changed_tools>` section, or `""` when there are none
 */
export function staleToolsNotice(stale: readonly StaleTool[]): string {
  if (stale.length === 0) return "";
  return [
    "<mcp_changed_tools>",
    "These tools changed since you loaded them. Their old schemas are withdrawn: call tool_search (select:<name>) again before using them.",
    ...stale.map((tool) => `- ${tool.name}: ${tool.reason}`),
    "</mcp_changed_tools>",
  ].join("\n");
}
