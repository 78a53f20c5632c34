/**
 * One tool as the model may see it: its model-visible name, the composed description,
 * a one-line summary for the deferred catalog, its schema, routing and definition hash.
 */
import type { RoutingConfig, ServerConfig } from "../config/index.js";
import { hashCanonical } from "../core/index.js";
import { neutralizeDeep, neutralizePromptTags } from "../governance/envelope/index.js";
import type { SourceKind, SourceManifest, ToolKind, ToolManifest } from "../governance/manifests/index.js";
import { modelVisibleName } from "./tool-names.js";

/** Longest one-line summary shown in `<available-deferred-tools>`. */
export const MAX_SUMMARY_LENGTH = 120;

/** Keyword routing of a surface tool, after config overrides. */
export interface SurfaceRouting {
  keywords: string[];
  mode: "prefer" | "off";
  /** 0–100; higher wins among keyword matches. */
  priority: number;
}

/** A tool offered to a model, deferred (MCP) or not (the app's built-ins). */
export interface SurfaceTool {
  /** Model-visible name, `mcp__<source>__<tool>` for MCP tools. */
  name: string;
  /** `<sourceId>.<toolId>`, as in `sciencegate call` and the ledger. */
  qualifiedName: string;
  sourceId: string;
  toolId: string;
  /** Tool description + prompt fragment + source summary + citation policy + caveats. */
  description: string;
  /** One line of at most 120 characters, for the deferred catalog. */
  summary: string;
  /**
   * JSON Schema of the arguments as the model sees it: the manifest's, with its prose neutralised (the
   * broker validates against the manifest's own schema).
   */
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  /** Live definition hash (catalog) or manifest hash (offline); a change invalidates promotion. */
  definitionHash: string;
  routing: SurfaceRouting;
  /** True for MCP tools: only their names are shown until `tool_search` promotes them. */
  deferred: boolean;
  /** The MCP server that serves the tool. */
  serverId?: string;
  /** The tool's name on its MCP server (the manifest's `mcpToolName`). */
  mcpToolName?: string;
  /**
   * The JSON Schema dialect the manifest's schema declares (`$schema`), when it is one of the published
   * dialect URIs; `inputSchema` leaves it out (models' tool APIs reject it), MCP clients may be told it.
   */
  schemaDialect?: string;
  /** The source's display name and prompt summary, indexed by `tool_search` as the "source" field. */
  sourceSummary?: string;
  /** The tool's own description and prompt fragment, indexed by `tool_search` as the "description". */
  toolDescription?: string;
  /** What the tool does (search, lookup, analysis, artifact-plan). */
  kind?: ToolKind;
  /** What data its source serves (literature, protein, ...). */
  sourceKind?: SourceKind;
}

/** Where a surface tool comes from. */
export interface SurfaceToolInput {
  source: SourceManifest;
  tool: ToolManifest;
  /** Live hash from the catalog; omitted offline, where the manifest tool is hashed instead. */
  definitionHash?: string;
  /** The configuration of the tool's server, whose routing overrides the manifest's. */
  serverConfig?: ServerConfig;
}

/**
 * Builds the surface view of one manifest tool. Texts that reach the model are neutralised: a
 * derived manifest carries a third-party server's own words, which must not open or close our
 * prompt sections.
 * @param input the source and tool manifests, the live hash and the server's configuration
 * @returns the surface tool (deferred)
 */
export function toSurfaceTool(input: SurfaceToolInput): SurfaceTool {
  const { source, tool } = input;
  const toolDescription = neutralizePromptTags(joinLines([tool.description, tool.promptFragment]));
  const sourceSummary = neutralizePromptTags(`${source.displayName}: ${source.prompt.summary}`);
  const caveats = source.prompt.caveats.length > 0 ? `Caveats: ${source.prompt.caveats.join(" ")}` : "";
  return {
    name: modelVisibleName(source.id, tool.id),
    qualifiedName: `${source.id}.${tool.id}`,
    sourceId: source.id,
    toolId: tool.id,
    description: joinLines([
      toolDescription,
      `Source: ${sourceSummary}`,
      neutralizePromptTags(`Citation: ${source.prompt.citationPolicy}`),
      neutralizePromptTags(caveats),
    ]),
    summary: neutralizePromptTags(oneLineSummary(tool.description)),
    inputSchema: modelSchema(tool.inputSchema),
    readOnly: tool.readOnly,
    definitionHash: input.definitionHash ?? manifestToolHash(tool),
    routing: effectiveRouting(tool, input.serverConfig),
    deferred: true,
    serverId: source.transport.mcpServerId,
    mcpToolName: tool.mcpToolName,
    ...dialectOf(tool.inputSchema),
    sourceSummary,
    toolDescription,
    kind: tool.kind,
    sourceKind: source.kind,
  };
}

/** A built-in (non-MCP) tool of the app, described for the surface. */
export interface BuiltinToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** @default false (fail closed) */
  readOnly?: boolean;
}

/**
 * Describes one of the app's own tools (e.g. `artifact_download`) as a non-deferred surface tool,
 * so that `visibleToolSchemas` and `isCallable` treat it like the rest: always visible.
 * @param spec name, description and schema
 * @returns a surface tool with `deferred: false` and source id `builtin`
 */
export function builtinSurfaceTool(spec: BuiltinToolSpec): SurfaceTool {
  return {
    name: spec.name,
    qualifiedName: `builtin.${spec.name}`,
    sourceId: "builtin",
    toolId: spec.name,
    description: spec.description,
    summary: oneLineSummary(spec.description),
    inputSchema: spec.inputSchema,
    readOnly: spec.readOnly ?? false,
    definitionHash: hashCanonical(spec),
    routing: { keywords: [], mode: "off", priority: 0 },
    deferred: false,
  };
}

/**
 * The routing that applies to a tool: the config's per-tool routing (keyed by MCP tool name), else
 * the config's server routing, else the manifest's. Priorities are clamped to 0–100.
 * @param tool the tool manifest
 * @param serverConfig the configuration of the tool's server, if any
 * @returns the effective routing
 */
export function effectiveRouting(tool: ToolManifest, serverConfig?: ServerConfig): SurfaceRouting {
  const chosen: RoutingConfig =
    toolConfig(serverConfig, tool.mcpToolName)?.routing ?? serverConfig?.routing ?? tool.routing;
  const priority = Math.min(100, Math.max(0, Number.isFinite(chosen.priority) ? chosen.priority : 0));
  return { keywords: [...chosen.keywords], mode: chosen.mode, priority };
}

/**
 * The first sentence of a description on one line, cut at a word boundary to at most 120 characters.
 * @param text a description
 * @returns the summary (an ellipsis marks a cut)
 */
export function oneLineSummary(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  // A sentence ends at ". " followed by a capital, so "e.g. x" and "v1.2" do not end it.
  const end = flat.search(/[.!?](?=\s+[A-Z(])/);
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat;
  if (sentence.length <= MAX_SUMMARY_LENGTH) return sentence;
  const cut = sentence.slice(0, MAX_SUMMARY_LENGTH - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > MAX_SUMMARY_LENGTH / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}

/** Offline stand-in for the live definition hash: what the manifest promises the tool to be. */
function manifestToolHash(tool: ToolManifest): string {
  return hashCanonical({
    name: tool.mcpToolName,
    description: tool.description,
    inputSchema: tool.inputSchema,
  });
}

/**
 * The schema every consumer shows the model (`tool_search`, bound tools, the fixed tool table). Its
 * descriptions, titles, defaults and examples are a third-party server's words, so they are neutralised
 * here, once. `$schema` names a JSON Schema dialect: noise to a model, and some providers reject it.
 */
/** The published JSON Schema dialects; any other `$schema` value is dropped (it could say anything). */
const DIALECTS = new Set([
  "https://json-schema.org/draft/2020-12/schema",
  "https://json-schema.org/draft/2019-09/schema",
  "http://json-schema.org/draft-07/schema#",
  "http://json-schema.org/draft-07/schema",
  "http://json-schema.org/draft-06/schema#",
  "http://json-schema.org/draft-04/schema#",
]);

function dialectOf(schema: ToolManifest["inputSchema"]): { schemaDialect?: string } {
  const dialect = (schema as Record<string, unknown>).$schema;
  return typeof dialect === "string" && DIALECTS.has(dialect) ? { schemaDialect: dialect } : {};
}

function modelSchema(schema: ToolManifest["inputSchema"]): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return neutralizeSchema(rest) as Record<string, unknown>;
}

/** Keywords whose value maps names to subschemas: the names (property names) are the call's contract. */
const SUBSCHEMA_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);
/** Keywords whose value is a subschema or a list of them. */
const SUBSCHEMAS = new Set([
  ...["items", "prefixItems", "additionalItems", "contains", "additionalProperties", "propertyNames"],
  ...["unevaluatedItems", "unevaluatedProperties", "not", "if", "then", "else", "allOf", "anyOf", "oneOf"],
]);
/** Keywords that are structure, not prose: kept verbatim so that the model sends what validates. */
const VERBATIM = new Set([
  "type",
  "required",
  "pattern",
  "format",
  "$ref",
  "$id",
  "$anchor",
  "dependentRequired",
]);

/**
 * A copy of a JSON Schema with every other string neutralised (descriptions, titles, enum values and
 * their descriptions, defaults, examples, unknown keywords), keys of non-schema objects included.
 */
function neutralizeSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(neutralizeSchema);
  if (typeof node !== "object" || node === null) return neutralizeDeep(node);
  // fromEntries defines own properties, so a "__proto__" property name stays a plain key.
  return Object.fromEntries(
    Object.entries(node).map(([key, value]): [string, unknown] => {
      if (VERBATIM.has(key)) return [key, value];
      if (SUBSCHEMAS.has(key)) return [key, neutralizeSchema(value)];
      if (SUBSCHEMA_MAPS.has(key) && typeof value === "object" && value !== null && !Array.isArray(value)) {
        return [
          key,
          Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, neutralizeSchema(sub)])),
        ];
      }
      return [neutralizePromptTags(key), neutralizeDeep(value)];
    }),
  );
}

function joinLines(parts: readonly string[]): string {
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .join("\n");
}

/** A tool's own entry in the server config (MCP tool names such as `constructor` are not prototype members). */
function toolConfig(serverConfig: ServerConfig | undefined, mcpToolName: string) {
  const tools = serverConfig?.tools;
  return tools !== undefined && Object.hasOwn(tools, mcpToolName) ? tools[mcpToolName] : undefined;
}
