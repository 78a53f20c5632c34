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
 *   a tool that is not read-only and takes a path (or URL) argument is scoped narrower: a grant
 *   covers one directory (or origin), see {@link derivedPermission};
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
    // Annotations are hints from an unknown server: only an explicit `true` counts.
    const readOnly = tool.annotations?.readOnlyHint === true;
    return {
      id: toolId,
      description: tool.description?.trim() || tool.annotations?.title || tool.title || tool.name,
      kind: "analysis",
      mcpToolName: tool.name,
      inputSchema: tool.inputSchema,
      readOnly,
      permission: derivedPermission(serverId, tool, readOnly),
      // Retrying a call that may have side effects could repeat them.
      retryPolicy: readOnly ? {} : { maxAttempts: 1 },
      timeoutMs: DERIVED_TIMEOUT_MS,
      routing: { keywords: [], mode: "off", priority: 0 },
      promptFragment: "",
    };
  });
}

const PATH_NAMES = new Set(["path", "file", "filename", "destination", "source", "directory", "dir"]);
const URL_NAMES = new Set(["url", "uri"]);
const QUERY_NAMES = new Set(["query", "q", "search"]);
const ID_NAMES = new Set(["id", "identifier", "doi", "pmid", "accession", "name"]);
const CONTENT_NAMES = new Set(["content", "text", "body", "data"]);
/** Placeholder names the template syntax accepts. */
const PLACEHOLDER_NAME = /^[A-Za-z0-9_.-]+$/;

type ArgRole = "path" | "url" | "shown" | "content";

/**
 * What a derived card shows of an argument, judged from its name and schema (the server's own,
 * unverified claims, so only the card's wording and a grant's narrowing depend on it).
 */
function argRole(name: string, schema: unknown): ArgRole | undefined {
  const prop = (typeof schema === "object" && schema !== null ? schema : {}) as {
    type?: unknown;
    format?: unknown;
  };
  const lower = name.toLowerCase();
  if (!PLACEHOLDER_NAME.test(name)) return undefined;
  if (prop.type !== undefined && prop.type !== "string")
    return CONTENT_NAMES.has(lower) ? "content" : undefined;
  if (PATH_NAMES.has(lower) || lower.endsWith("path")) return "path";
  if (URL_NAMES.has(lower) || prop.format === "uri" || prop.format === "url") return "url";
  if (CONTENT_NAMES.has(lower)) return "content";
  if (QUERY_NAMES.has(lower) || ID_NAMES.has(lower) || lower.endsWith("_id") || /[a-z]Id$/.test(name)) {
    return "shown";
  }
  return undefined;
}

/**
 * The permission block of a derived tool:
 * - the summary names the tool, the server and the decisive arguments of the call (paths, URLs,
 *   queries, identifiers and names as values; content, text, body and data as their size), e.g.
 *   `write_file on filesystem: path "/tmp/x/a.txt", content 16 characters`;
 * - a tool that is not read-only with path or URL arguments gets a `scopeTemplate` of the
 *   directory of each path and the origin of each URL (`filesystem:write_file:dir:{path|dir}`), so
 *   `allow_matching` covers that directory only (a relative path falls back to the whole tool).
 */
function derivedPermission(serverId: string, tool: Tool, readOnly: boolean): ToolManifest["permission"] {
  const action = `${serverId}:${tool.name}`;
  const shown: string[] = [];
  const scope: string[] = [];
  for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
    const role = argRole(name, schema);
    if (role === undefined) continue;
    shown.push(role === "content" ? `{${name}|size}` : `{${name}|arg}`);
    if (role === "path") scope.push(`dir:{${name}|dir}`);
    if (role === "url") scope.push(`origin:{${name}|origin}`);
  }
  const head = `${tool.name} on ${serverId}`.replace(/[{}]/g, "");
  return {
    action,
    resourceTemplate: action,
    summaryTemplate: shown.length === 0 ? head : `${head}: ${shown.join(", ")}`,
    // A name with braces would read as a placeholder: such a tool keeps the tool-wide scope.
    ...(readOnly || scope.length === 0 || /[{}]/.test(action)
      ? {}
      : { scopeTemplate: `${action}:${scope.join(":")}` }),
  };
}

function normalizeId(raw: string, invalid: RegExp, replacement: string): string {
  const id = raw
    .toLowerCase()
    .replace(invalid, replacement)
    .replace(/^[^a-z0-9]+/, "");
  return id === "" ? `x${sha256Hex(raw).slice(0, 8)}` : id;
}
