/** Resolving `provider.tool` and bare tool names to catalog tools. */

import { GovernanceError } from "../core/index.js";
import type { CatalogTool, SourceCatalog } from "../governance/catalog/index.js";
import { derivedSourceId } from "../governance/manifests/index.js";

/** A resolved tool name. */
export interface ResolvedTool {
  sourceId: string;
  toolId: string;
  /** `provider.tool`: the server id and the live tool name for servers without a manifest. */
  qualifiedName: string;
}

/**
 * The qualified name of a catalog tool: `<provider>.<tool>` for providers without a manifest (the names
 * written in `science.toml` and by the function), `<source>.<toolId>` for manifest sources.
 * @param tool a catalog tool
 * @param derived whether its source has a derived manifest
 * @returns e.g. `local.power_law_fit`, `pubmed.search`
 */
export function qualifiedToolName(tool: CatalogTool, derived: boolean): string {
  return derived ? `${tool.serverId}.${tool.liveTool.name}` : `${tool.sourceId}.${tool.toolId}`;
}

/**
 * Finds the one tool a name means. A qualified name always resolves to its provider (an unavailable
 * provider's tool is still returned, so the broker records the failure at the point of use).
 * @param catalog a refreshed catalog
 * @param name `provider.tool` or a bare tool name
 * @returns the source and tool ids
 * @throws GovernanceError `INVALID_INPUT` for an ambiguous bare name (the message lists the candidates);
 *   `TOOL_UNAVAILABLE` for an unknown name (naming unavailable providers that might have had it)
 */
export function resolveToolName(catalog: SourceCatalog, name: string): ResolvedTool {
  const entries = catalog.tools().map((tool) => {
    const derived = catalog.source(tool.sourceId)?.derived ?? false;
    return { tool, qualifiedName: qualifiedToolName(tool, derived) };
  });
  const exact = entries.find(
    (e) => e.qualifiedName === name || `${e.tool.sourceId}.${e.tool.toolId}` === name,
  );
  if (exact) return pick(exact.tool, exact.qualifiedName);
  const dot = name.indexOf(".");
  if (dot > 0) {
    const provider = name.slice(0, dot);
    const source = catalog.source(provider) ?? catalog.source(derivedSourceId(provider));
    if (source) {
      const toolName = name.slice(dot + 1);
      const missing = source.missingTools.find((m) => m.mcpToolName === toolName || m.toolId === toolName);
      const toolId = missing?.toolId ?? toolName.toLowerCase().replace(/[^a-z0-9_-]/g, "_");
      return { sourceId: source.id, toolId, qualifiedName: name };
    }
  }
  const matches = entries.filter((e) => e.tool.liveTool.name === name || e.tool.toolId === name);
  const [only, ...others] = matches;
  if (only && others.length === 0) return pick(only.tool, only.qualifiedName);
  if (only) {
    const candidates = matches.map((m) => m.qualifiedName);
    throw new GovernanceError(
      "INVALID_INPUT",
      `Tool name '${name}' is ambiguous; use one of the qualified names: ${candidates.join(", ")}.`,
      { data: { name, candidates } },
    );
  }
  const down = catalog
    .sources()
    .filter((s) => s.status === "unavailable")
    .map((s) => `${s.serverId} (${s.reason ?? "unavailable"})`);
  const hint = down.length > 0 ? ` Unavailable tool providers: ${down.join("; ")}.` : "";
  throw new GovernanceError("TOOL_UNAVAILABLE", `No tool named '${name}'.${hint}`, { data: { name } });
}

function pick(tool: CatalogTool, qualifiedName: string): ResolvedTool {
  return { sourceId: tool.sourceId, toolId: tool.toolId, qualifiedName };
}
