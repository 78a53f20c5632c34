/**
 * Matches a source's manifest tools to the live tools of its server, which decides the source's
 * status: only a tool that the server offers with a compatible input schema becomes callable.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { hashCanonical } from "../../core/index.js";
import type { SourceManifest } from "../manifests/index.js";
import type { ToolListing } from "./list-server-tools.js";
import { inputSchemasCompatible } from "./schema-compat.js";
import type { CatalogSource, CatalogTool, MissingTool } from "./source-catalog-types.js";

/** The part of a `CatalogSource` that matching decides. */
type SourceOutcome = Pick<CatalogSource, "status" | "reason" | "availableTools" | "missingTools">;

/**
 * Matches a source's manifest tools to the live tools of its server, by `mcpToolName` (the first
 * live tool of a name wins).
 * @param manifest the source's manifest (or derived manifest)
 * @param listing what listing the source's server gave
 * @returns the source's status, reason, available and missing tools, and its callable tools
 */
export function matchTools(
  manifest: SourceManifest,
  listing: ToolListing,
): { source: SourceOutcome; tools: CatalogTool[] } {
  const serverId = manifest.transport.mcpServerId;
  const tools: CatalogTool[] = [];
  const missingTools: MissingTool[] = [];
  const live = new Map<string, Tool>();
  if (listing.ok) for (const tool of listing.tools) if (!live.has(tool.name)) live.set(tool.name, tool);
  for (const tool of manifest.tools) {
    const liveTool = live.get(tool.mcpToolName);
    const compat = liveTool && inputSchemasCompatible(tool.inputSchema, liveTool.inputSchema);
    const miss = (reason: string) =>
      missingTools.push({ toolId: tool.id, mcpToolName: tool.mcpToolName, reason });
    if (!listing.ok) miss(listing.reason);
    else if (!liveTool || !compat) miss(`server '${serverId}' has no tool '${tool.mcpToolName}'`);
    else if (!compat.compatible)
      miss(`input schema incompatible with the live tool: ${compat.reasons.join("; ")}`);
    else {
      const definitionHash = toolDefinitionHash(liveTool);
      tools.push({
        sourceId: manifest.id,
        toolId: tool.id,
        serverId,
        manifest: tool,
        liveTool,
        definitionHash,
      });
    }
  }
  const availableTools = tools.map((t) => t.toolId);
  const outcome = { availableTools, missingTools };
  if (!listing.ok) return { source: { status: "unavailable", reason: listing.reason, ...outcome }, tools };
  if (missingTools.length === 0) return { source: { status: "ready", ...outcome }, tools };
  const total = manifest.tools.length;
  if (tools.length === 0) {
    // Nothing of the source can be called, which "degraded" would understate.
    return {
      source: { status: "unavailable", reason: `none of its ${total} tools is available`, ...outcome },
      tools,
    };
  }
  const names = missingTools.map((m) => m.toolId).join(", ");
  const reason = `${missingTools.length} of ${total} tools unavailable: ${names}`;
  return { source: { status: "degraded", reason, ...outcome }, tools };
}

/** The fingerprint of a live MCP tool definition, used to detect changed tools. */

/**
 * Hashes what defines a tool's contract: name, description, input and output schemas and
 * annotations. Key order does not matter (canonical JSON); `title`, `icons` and `_meta` are left
 * out because they change presentation, not behaviour. Permission grants and catalog revisions
 * key on this hash, so a server that silently changes a tool invalidates them.
 * @param tool a tool from `tools/list`
 * @returns hex SHA-256
 */
export function toolDefinitionHash(tool: Tool): string {
  return hashCanonical({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  });
}
