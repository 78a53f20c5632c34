import type { ExtensionsConfig } from "../../config/index.js";
import { loadExtensionsConfig } from "../../config/index.js";
import { SourceCatalog } from "../../governance/catalog/index.js";
import { builtinManifestDir, SourceRegistry } from "../../governance/manifests/index.js";
import { SessionSettings } from "../../governance/permissions/index.js";
import { ServerPool } from "../../mcp/index.js";
import type { SurfaceTool } from "../../visibility/index.js";
import { ToolSearchIndex, ToolSurface } from "../../visibility/index.js";
import type { CliIo, ExitCode } from "../io.js";

/** How long one configured server may take to list its tools before it is skipped. */
const LIST_TOOLS_TIMEOUT_MS = 10_000;
/** The session whose enablement the CLI uses: every source on, so every tool can be found. */
const CLI_SESSION = "cli";

/** Options of `searchToolsCommand`. */
export interface SearchToolsOptions {
  query: string;
  maxResults: number;
  json: boolean;
  /** `--config`: add the tools of the configured servers that answer. */
  configPath?: string;
  /** `--manifests`: extra manifest folders. */
  manifestDirs?: string[];
}

/** `sciencegate search-tools --json` output. */
export interface SearchToolsReport {
  results: { name: string; score: number; matchedIn: string[] }[];
}

/**
 * `sciencegate search-tools "<query>"`: the `tool_search` ranking over the built-in manifests
 * (offline, nothing is started), plus the live tools of configured servers when a config file is
 * found (`--config`, the environment or `./extensions_config.json`) and its servers answer.
 * @param io output streams, environment and working directory
 * @param options query, result count, output format, config and manifest folders
 * @returns 0 (also when nothing matches)
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` for a bad config or manifest
 */
export async function searchToolsCommand(io: CliIo, options: SearchToolsOptions): Promise<ExitCode> {
  const registry = await SourceRegistry.fromDirs([builtinManifestDir(), ...(options.manifestDirs ?? [])]);
  const config = await loadExtensionsConfig({
    env: io.env,
    cwd: io.cwd,
    ...(options.configPath ? { configPath: options.configPath } : {}),
  });
  const byName = new Map<string, SurfaceTool>();
  for (const tool of ToolSurface.fromManifests(registry.list(), { serverRouting: config.servers })) {
    byName.set(tool.name, tool);
  }
  // Without a config file the built-in default would only serve the built-in manifests again.
  if (config.path !== undefined && config.servers.length > 0) {
    for (const tool of await liveTools(io, registry, config)) byName.set(tool.name, tool);
  }
  const tools = [...byName.values()];
  const hits = new ToolSearchIndex(tools).search(options.query, options.maxResults);
  if (options.json) {
    const report: SearchToolsReport = { results: hits };
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const from = config.path === undefined ? "built-in manifests" : `built-in manifests and ${config.path}`;
  io.stdout(`${hits.length} of ${tools.length} tools (${from}) match "${options.query}"\n`);
  hits.forEach((hit, i) => {
    const summary = byName.get(hit.name)?.summary ?? "";
    io.stdout(
      `${String(i + 1).padStart(3)}. ${hit.name}  score ${hit.score} (${hit.matchedIn.join(", ")})\n`,
    );
    io.stdout(`     ${summary}\n`);
  });
  return 0;
}

/** The surface tools of every configured server that answers; failures become warnings. */
async function liveTools(
  io: CliIo,
  registry: SourceRegistry,
  config: ExtensionsConfig,
): Promise<SurfaceTool[]> {
  const pool = new ServerPool(config.servers, { env: io.env });
  const catalog = new SourceCatalog({ registry, pool, listToolsTimeoutMs: LIST_TOOLS_TIMEOUT_MS });
  try {
    const snapshot = await catalog.refresh();
    for (const id of pool.serverIds()) {
      const state = pool.state(id);
      if (state.status === "failed") {
        io.stderr(`warning: server '${id}' unavailable: ${state.reason ?? "unknown reason"}\n`);
      }
    }
    const sessions = new SessionSettings();
    for (const source of snapshot.sources) sessions.enableSource(CLI_SESSION, source.id);
    return new ToolSurface({ catalog, sessions, serverRouting: config.servers }).tools(CLI_SESSION);
  } finally {
    await pool.close();
  }
}
