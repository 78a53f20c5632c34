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
}

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
 * @returns `tool_search`, the built-ins and the visible governed tools, with the list's fingerprint
 */
export function gatewayToolList(
  tools: readonly SurfaceTool[],
  promotion: PromotionState,
  builtins: readonly StructuredToolInterface[],
): GatewayToolList {
  const visible = visibleTools(tools, promotion);
  return {
    tools: [TOOL_SEARCH_ENTRY, ...builtins.map(builtinEntry), ...visible.map(governedEntry)],
    fingerprint: [
      ...builtins.map((tool) => tool.name),
      ...visible.map((tool) => `${tool.name} ${tool.definitionHash}`),
    ].join("\n"),
  };
}

/**
 * A governed tool as MCP lists it: model-visible name, composed description, the schema the model
 * sees. A tool the manifest does not declare read-only keeps the protocol's defaults (destructive,
 * open world), so a client never reads a call as safer than the policy does.
 */
function governedEntry(tool: SurfaceTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: objectSchema(tool.inputSchema),
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
 * MCP requires an object schema at the top; `$schema` names a dialect, which some clients reject.
 * Manifest schemas are objects already (the manifest schema says so); this only fixes the label.
 */
function objectSchema(schema: object): Tool["inputSchema"] {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: "object" };
}
