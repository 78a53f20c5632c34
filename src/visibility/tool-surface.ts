/**
 * The tool surface of a session: three filters (registry, catalog availability,
 * session enablement), model-visible names and composed descriptions. MCP tools come out deferred.
 */
import type { ServerConfig } from "../config/index.js";
import type { CatalogTool, SourceCatalog } from "../governance/catalog/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import { SessionSettings } from "../governance/permissions/index.js";
import { type SurfaceTool, toSurfaceTool } from "./surface-tool.js";
import { buildToolNameTable } from "./tool-names.js";

export type { SurfaceRouting, SurfaceTool } from "./surface-tool.js";

/** Options of `ToolSurface`. */
export interface ToolSurfaceOptions {
  /** The live catalog (registry ∩ what the servers offer with compatible schemas). */
  catalog: SourceCatalog;
  /** Per-session source switches. @default a fresh `SessionSettings` (each manifest's `enabledByDefault`) */
  sessions?: SessionSettings;
  /** Server configurations whose `routing` / `tools[name].routing` override manifest routing. */
  serverRouting?: ServerConfig[];
}

/** Options of `ToolSurface.fromManifests`. */
export interface FromManifestsOptions {
  /** Server configurations whose routing overrides manifest routing. */
  serverRouting?: ServerConfig[];
}

interface RevisionCache {
  revision: string;
  tools: SurfaceTool[];
  /** Enabled-source key -> the session's list; identical lists share one array (and one search index). */
  bySources: Map<string, SurfaceTool[]>;
}

/**
 * What a session's model may know about: every available, session-enabled tool with its
 * model-visible name. Lists are cached per catalog revision and reused by reference, so a search
 * index keyed on the list is built once per revision.
 * @example
 * const surface = new ToolSurface({ catalog, sessions });
 * const tools = surface.tools(threadId); // SurfaceTool[], all deferred
 */
export class ToolSurface {
  readonly #catalog: SourceCatalog;
  readonly #sessions: SessionSettings;
  readonly #servers: Map<string, ServerConfig>;
  #cache: RevisionCache | undefined;

  /** @param options the catalog, session settings and config routing */
  constructor(options: ToolSurfaceOptions) {
    this.#catalog = options.catalog;
    this.#sessions = options.sessions ?? new SessionSettings();
    this.#servers = serverMap(options.serverRouting);
  }

  /**
   * Builds surface tools from manifests alone, with no live server: the offline view used by
   * `sciencegate search-tools` and the benchmark. Every tool of every manifest is included.
   * @param manifests validated source manifests
   * @param options config routing overrides
   * @returns the tools, deferred, hashed from their manifests
   * @throws GovernanceError `DUPLICATE_ID` when two tools get the same model-visible name
   */
  static fromManifests(
    manifests: readonly SourceManifest[],
    options: FromManifestsOptions = {},
  ): SurfaceTool[] {
    const servers = serverMap(options.serverRouting);
    const tools = manifests.flatMap((source) =>
      source.tools.map((tool) => {
        const serverConfig = servers.get(source.transport.mcpServerId);
        return toSurfaceTool({ source, tool, ...(serverConfig ? { serverConfig } : {}) });
      }),
    );
    buildToolNameTable(tools);
    return tools;
  }

  /**
   * The session's tools: catalog tools (already registry ∩ live ∩ compatible) whose source the
   * session has enabled, in catalog order.
   * @param sessionId the session (a LangGraph thread unless the app says otherwise)
   * @returns the same array for the same revision and enabled sources; do not mutate it
   * @throws GovernanceError `DUPLICATE_ID` when two catalog tools get the same model-visible name
   */
  tools(sessionId: string): SurfaceTool[] {
    const cache = this.#current();
    const enabled = new Set<string>();
    for (const source of this.#catalog.sources()) {
      if (this.#sessions.isSourceEnabled(sessionId, source.manifest)) enabled.add(source.id);
    }
    const key = [...enabled].sort().join("\u0000");
    let list = cache.bySources.get(key);
    if (!list) {
      list = cache.tools.filter((tool) => enabled.has(tool.sourceId));
      cache.bySources.set(key, list);
    }
    return list;
  }

  /**
   * The sources the session has on whose server could not be reached at the last refresh: their tools
   * are missing from {@link tools}, so a search that finds nothing says so (without the reason, which
   * is the app's to read in `governance.warnings`).
   * @param sessionId the session
   * @returns source ids, in catalog order
   */
  unavailableSources(sessionId: string): string[] {
    return this.#catalog
      .sources()
      .filter((s) => s.status === "unavailable" && this.#sessions.isSourceEnabled(sessionId, s.manifest))
      .map((s) => s.id);
  }

  /**
   * One tool of the session by model-visible name.
   * @param sessionId the session
   * @param name e.g. `mcp__pubmed__search`
   * @returns the tool, or `undefined` when it is unknown, unavailable or its source is off for the session
   */
  get(sessionId: string, name: string): SurfaceTool | undefined {
    return this.tools(sessionId).find((tool) => tool.name === name);
  }

  /** @returns the catalog revision the surface reflects (`""` before the catalog's first refresh) */
  revision(): string {
    return this.#catalog.revision ?? "";
  }

  #current(): RevisionCache {
    const revision = this.revision();
    if (this.#cache?.revision === revision) return this.#cache;
    const tools = this.#catalog.tools().map((tool) => this.#toSurface(tool));
    // Names are checked over the whole catalog, so a collision fails every session alike.
    buildToolNameTable(tools);
    this.#cache = { revision, tools, bySources: new Map() };
    return this.#cache;
  }

  #toSurface(tool: CatalogTool): SurfaceTool {
    const source = this.#catalog.source(tool.sourceId)?.manifest;
    if (!source) throw new Error(`Catalog tool ${tool.sourceId}/${tool.toolId} has no source.`);
    const serverConfig = this.#servers.get(tool.serverId);
    return toSurfaceTool({
      source,
      tool: tool.manifest,
      definitionHash: tool.definitionHash,
      ...(serverConfig ? { serverConfig } : {}),
    });
  }
}

function serverMap(servers: readonly ServerConfig[] | undefined): Map<string, ServerConfig> {
  return new Map((servers ?? []).map((server) => [server.id, server]));
}
