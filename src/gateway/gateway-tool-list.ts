/**
 * What `tools/list` shows one gateway session: `tool_search`, the built-ins, then the governed tools the
 * session may call now (deferred tools promoted at their current definition), as MCP `Tool` entries
 * with the hints the manifests give. The fingerprint says whether a client's copy of the list is stale.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { PAPER_EXTRACT_TOOL_ID } from "../artifacts/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID } from "../governance/permissions/index.js";
import {
  createToolSearchTool,
  type PromotionState,
  type SurfaceTool,
  TOOL_SEARCH_NAME,
  visibleTools,
} from "../visibility/index.js";

/** A session's list and its fingerprint. */
export interface GatewayToolList {
  tools: Tool[];
  /** Changes exactly when a name, a definition or a built-in of the list changes. */
  fingerprint: string;
  /** The governed tools the gateway names by their upstream name: that name to the model-visible one. */
  upstreamNames: ReadonlyMap<string, string>;
}

/**
 * How the gateway names a governed tool to MCP clients: `qualified` (`mcp__<source>__<tool>`, unique by
 * construction) or `upstream` (the server's own name, used only where it is unambiguous).
 */
export type GatewayToolNaming = "qualified" | "upstream";

/**
 * A name MCP clients accept (1 to 128 of `A-Z a-z 0-9 _ - .`), not shaped like a qualified name: an
 * upstream name is a third party's word, so any other is left qualified.
 */
const UPSTREAM_NAME = /^(?!mcp__)[A-Za-z0-9_.-]{1,128}$/;

/**
 * The hints of the tools the gateway itself defines. Hints are advisory for clients; the broker and the
 * permission policy decide what runs.
 */
const BUILTIN_ANNOTATIONS: ReadonlyMap<string, ToolAnnotations> = new Map([
  [TOOL_SEARCH_NAME, { readOnlyHint: true, openWorldHint: false }],
  // A new file in the workspace (never an overwrite), fetched from the web.
  [ARTIFACT_DOWNLOAD_TOOL_ID, { readOnlyHint: false, destructiveHint: false, openWorldHint: true }],
  // Writes papers/<jobId>/ once; a repeated call returns the stored extraction.
  [
    PAPER_EXTRACT_TOOL_ID,
    { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  ],
]);

const toolSearch = createToolSearchTool({ getTools: () => [] });
const TOOL_SEARCH_ENTRY: Tool = {
  name: TOOL_SEARCH_NAME,
  description: toolSearch.description,
  inputSchema: objectSchema(toJsonSchema(toolSearch.schema)),
  annotations: BUILTIN_ANNOTATIONS.get(TOOL_SEARCH_NAME) as ToolAnnotations,
};

/**
 * The list one session sees now.
 * @param tools the session's governed tools (`Governance.tools(sessionId)`)
 * @param promotion the session's promotion state
 * @param builtins the session's built-in tools
 * @param naming how each governed tool is named to the client @default qualified for every tool
 * @returns `tool_search`, the built-ins and the visible governed tools, with the list's fingerprint
 *   and the upstream names in use
 */
export function gatewayToolList(
  tools: readonly SurfaceTool[],
  promotion: PromotionState,
  builtins: readonly StructuredToolInterface[],
  naming: (tool: SurfaceTool) => GatewayToolNaming = () => "qualified",
): GatewayToolList {
  const visible = visibleTools(tools, promotion);
  const upstreamNames = upstreamNamesOf(tools, builtins, naming);
  const exposed = new Map([...upstreamNames].map(([upstream, name]) => [name, upstream]));
  const nameOf = (tool: SurfaceTool) => exposed.get(tool.name) ?? tool.name;
  return {
    tools: [
      TOOL_SEARCH_ENTRY,
      ...builtins.map(builtinEntry),
      ...visible.map((tool) => governedEntry(tool, nameOf(tool))),
    ],
    fingerprint: [
      ...builtins.map((tool) => tool.name),
      ...visible.map((tool) => `${nameOf(tool)} ${tool.definitionHash}`),
    ].join("\n"),
    upstreamNames,
  };
}

/**
 * The upstream names a session's tools go by: over all of the session's tools (listed or not, so a
 * name does not change when another tool is promoted), a tool whose naming is `upstream` keeps its
 * server's name when no other tool, built-in or qualified name of the session is spelt the same.
 */
function upstreamNamesOf(
  tools: readonly SurfaceTool[],
  builtins: readonly StructuredToolInterface[],
  naming: (tool: SurfaceTool) => GatewayToolNaming,
): Map<string, string> {
  const taken = new Map<string, number>();
  const count = (name: string) => taken.set(name, (taken.get(name) ?? 0) + 1);
  count(TOOL_SEARCH_NAME);
  for (const tool of builtins) count(tool.name);
  const wanting: SurfaceTool[] = [];
  for (const tool of tools) {
    count(tool.name);
    if (!tool.deferred || naming(tool) !== "upstream") continue;
    const upstream = tool.mcpToolName;
    if (upstream === undefined || !UPSTREAM_NAME.test(upstream)) continue;
    wanting.push(tool);
    if (upstream !== tool.name) count(upstream);
  }
  const names = new Map<string, string>();
  for (const tool of wanting) {
    const upstream = tool.mcpToolName as string;
    if (taken.get(upstream) === 1) names.set(upstream, tool.name);
  }
  return names;
}

/**
 * A governed tool as MCP lists it: model-visible name, composed description, the schema the model
 * sees. A tool the manifest does not declare read-only keeps the protocol's defaults (destructive,
 * open world), so a client never reads a call as safer than the policy does.
 */
function governedEntry(tool: SurfaceTool, name: string): Tool {
  const dialect = tool.schemaDialect === undefined ? {} : { $schema: tool.schemaDialect };
  return {
    name,
    description: tool.description,
    inputSchema: { ...dialect, ...objectSchema(tool.inputSchema) },
    annotations: { readOnlyHint: tool.readOnly },
  };
}

function builtinEntry(tool: StructuredToolInterface): Tool {
  const annotations = BUILTIN_ANNOTATIONS.get(tool.name);
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: objectSchema(toJsonSchema(tool.schema)),
    ...(annotations ? { annotations } : {}),
  };
}

/**
 * MCP requires an object schema at the top. A governed tool's dialect is put back from
 * `schemaDialect` (a published dialect URI only); any other `$schema` is dropped. Manifest schemas are
 * objects already (the manifest schema says so); this only fixes the label.
 */
function objectSchema(schema: object): Tool["inputSchema"] {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: "object" };
}
