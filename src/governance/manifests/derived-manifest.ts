/**
 * A default manifest for an MCP server that has none (a user's own server), so that its tools are
 * still governed. Everything the server says about itself is an untrusted hint, so the defaults
 * fail closed.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { sha256Hex } from "../../core/index.js";
import type { SourceManifest, ToolManifest } from "./manifest-schema.js";

/** Response cap of a derived source; a manifest can raise it. */
export const DERIVED_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Per-call timeout of a derived tool. */
export const DERIVED_TIMEOUT_MS = 60_000;

/**
 * Builds the default manifest of a server without one. The choices, all fail-closed:
 * - a tool is `readOnly` only when its `annotations.readOnlyHint` is literally `true`, so any other
 *   tool counts as dangerous and asks for permission;
 * - the cache is off (results of unknown tools may be personal or change at any time);
 * - `networkHosts` is empty, so no record URL passes the envelope checks unless the app adds hosts;
 * - `dataClassification` stays `public`: nothing is known about the data, and the readOnly rule
 *   above already routes every write-capable call through approval;
 * - the permission action and resource are `<server>:<tool>`, so a grant covers exactly one tool;
 * - a tool that is not read-only is tried once (a retry could repeat its side effects).
 *
 * The source id is the server id lowercased with other characters than `[a-z0-9-]` turned into
 * `-`; tool ids are lowercased MCP names with other characters than `[a-z0-9_-]` turned into `_`
 * (two names that collide get a short hash suffix). `mcpToolName` keeps the exact live name.
 * @param serverId the server's id in the configuration
 * @param tools the server's live tools
 * @param serverDescription the configuration's description of the server, if any
 * @returns a manifest typed like a loaded one (not registered; `termsUrl` is empty: terms unknown)
 */
export function deriveManifest(
  serverId: string,
  tools: readonly Tool[],
  serverDescription?: string,
): SourceManifest {
  const id = derivedSourceId(serverId);
  const description =
    serverDescription?.trim() || `MCP server '${serverId}' (no manifest; derived from its tools).`;
  return {
    id,
    displayName: serverId,
    description,
    publisher: serverId,
    version: "derived",
    kind: "other",
    enabledByDefault: true,
    transport: { mcpServerId: serverId },
    cache: { enabled: false, ttlSeconds: 0 },
    prompt: {
      summary: description,
      citationPolicy: `Cite the MCP server '${serverId}' and the tool that returned each result.`,
      caveats: [
        "This server has no Sciencegate manifest: tool descriptions and annotations are the server's own, unverified claims.",
      ],
    },
    governance: {
      attribution: `Data from the MCP server '${serverId}'.`,
      license: "unknown",
      termsUrl: "",
      dataClassification: "public",
      networkHosts: [],
      maxResponseBytes: DERIVED_MAX_RESPONSE_BYTES,
      rateLimitGroup: id,
    },
    tools: deriveTools(serverId, tools),
  };
}

/**
 * The source id a derived manifest gets for a server id.
 * @param serverId the server's id in the configuration
 * @returns the id lowercased, with characters outside `[a-z0-9-]` turned into `-`
 */
export function derivedSourceId(serverId: string): string {
  return normalizeId(serverId, /[^a-z0-9-]/g, "-");
}

function deriveTools(serverId: string, tools: readonly Tool[]): ToolManifest[] {
  const taken = new Set<string>();
  return tools.map((tool) => {
    let toolId = normalizeId(tool.name, /[^a-z0-9_-]/g, "_");
    if (taken.has(toolId)) toolId = `${toolId}_${sha256Hex(tool.name).slice(0, 6)}`;
    taken.add(toolId);
    const action = `${serverId}:${tool.name}`;
    // Annotations are hints from an unknown server: only an explicit `true` counts.
    const readOnly = tool.annotations?.readOnlyHint === true;
    return {
      id: toolId,
      description: tool.description?.trim() || tool.annotations?.title || tool.title || tool.name,
      kind: "analysis",
      mcpToolName: tool.name,
      inputSchema: tool.inputSchema,
      readOnly,
      permission: {
        action,
        resourceTemplate: action,
        summaryTemplate: `Call the tool '${tool.name}' of the MCP server '${serverId}' (no manifest).`,
      },
      // Retrying a call that may have side effects could repeat them.
      retryPolicy: readOnly ? {} : { maxAttempts: 1 },
      timeoutMs: DERIVED_TIMEOUT_MS,
      routing: { keywords: [], mode: "off", priority: 0 },
      promptFragment: "",
    };
  });
}

function normalizeId(raw: string, invalid: RegExp, replacement: string): string {
  const id = raw
    .toLowerCase()
    .replace(invalid, replacement)
    .replace(/^[^a-z0-9]+/, "");
  return id === "" ? `x${sha256Hex(raw).slice(0, 8)}` : id;
}
