/**
 * Resolving tool names to catalog tools: the one rule behind `callTool`, `sciencegate call`,
 * `sciencegate verify` and the `tool_use_verified` gate.
 */

import { GovernanceError } from "../core/index.js";
import type { CatalogSource, CatalogTool, SourceCatalog } from "../governance/catalog/index.js";
import { derivedSourceId } from "../governance/manifests/index.js";
import { modelVisibleName } from "../visibility/index.js";

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
 * Finds the one tool a name means: a qualified name (`provider.tool`, `source.toolId`), a model-visible
 * name (`mcp__<source>__<tool>`) or a bare tool name that only one provider has. A qualified or
 * model-visible name of a known source always resolves to it, even when that tool is not callable now,
 * so that the broker refuses the call at the point of use and records why.
 * @param catalog a refreshed catalog
 * @param name `provider.tool`, `mcp__<source>__<tool>` or a bare tool name
 * @returns the source and tool ids
 * @throws GovernanceError `INVALID_INPUT` for an ambiguous bare name (the message lists the candidates);
 *   `TOOL_UNAVAILABLE` for an unknown name (naming close names and unavailable providers)
 */
export function resolveToolName(catalog: SourceCatalog, name: string): ResolvedTool {
  const entries = catalog.tools().map((tool) => {
    const derived = catalog.source(tool.sourceId)?.derived ?? false;
    return { tool, qualifiedName: qualifiedToolName(tool, derived) };
  });
  const exact = entries.find(
    ({ tool, qualifiedName }) =>
      qualifiedName === name ||
      `${tool.sourceId}.${tool.toolId}` === name ||
      modelVisibleName(tool.sourceId, tool.toolId) === name,
  );
  if (exact) return pick(exact.tool, exact.qualifiedName);
  const ofKnownSource = resolveInSource(catalog, name);
  if (ofKnownSource) return ofKnownSource;
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
  const needle = name.split(/__|\./).pop() || name;
  const close = entries.filter((e) => e.qualifiedName.includes(needle)).map((e) => e.qualifiedName);
  // Several sources share one server (the bundled twelve): each unavailable server is named once.
  const downServers = new Map<string, string>();
  for (const s of catalog.sources()) {
    if (s.status === "unavailable" && !downServers.has(s.serverId))
      downServers.set(s.serverId, s.reason ?? "unavailable");
  }
  const down = [...downServers].map(([serverId, reason]) => `${serverId} (${reason})`);
  const hints = [
    close.length > 0 ? ` Did you mean: ${close.slice(0, 5).join(", ")}?` : "",
    down.length > 0 ? ` Unavailable tool providers: ${down.join("; ")}.` : "",
  ];
  throw new GovernanceError("TOOL_UNAVAILABLE", `No tool named '${name}'.${hints.join("")}`, {
    data: { name },
  });
}

/** `provider.tool` or `mcp__<source>__<tool>` of a known source whose tool is not callable now. */
function resolveInSource(catalog: SourceCatalog, name: string): ResolvedTool | undefined {
  const visible = /^mcp__(.+?)__(.+)$/.exec(name);
  const dot = name.indexOf(".");
  const [provider, toolName] = visible
    ? [visible[1] as string, visible[2] as string]
    : dot > 0
      ? [name.slice(0, dot), name.slice(dot + 1)]
      : [undefined, undefined];
  if (provider === undefined || toolName === undefined) return undefined;
  const source: CatalogSource | undefined =
    catalog.source(provider) ?? catalog.source(derivedSourceId(provider));
  if (!source) return undefined;
  const missing = source.missingTools.find((m) => m.mcpToolName === toolName || m.toolId === toolName);
  const toolId = missing?.toolId ?? toolName.toLowerCase().replace(/[^a-z0-9_-]/g, "_");
  const qualifiedName = source.derived ? `${source.serverId}.${toolName}` : `${source.id}.${toolId}`;
  return { sourceId: source.id, toolId, qualifiedName };
}

function pick(tool: CatalogTool, qualifiedName: string): ResolvedTool {
  return { sourceId: tool.sourceId, toolId: tool.toolId, qualifiedName };
}
