import { type ScienceProject, withScienceProject } from "../../adk/index.js";
import type { ExtensionsConfig } from "../../config/index.js";
import { SourceCatalog } from "../../governance/catalog/index.js";
import { builtinManifestDir, SourceRegistry } from "../../governance/manifests/index.js";
import { SessionSettings } from "../../governance/permissions/index.js";
import { ServerPool } from "../../mcp/index.js";
import {
  extensionTransports,
  type GovernanceExtension,
  resolveGovernanceConfig,
} from "../../runtime/index.js";
import { type SurfaceTool, ToolSearchIndex, ToolSurface } from "../../visibility/index.js";
import type { CliIo, ExitCode } from "../io.js";
import { terminalLine } from "../terminal-text.js";

/** How long one configured server may take to list its tools before it is skipped (no science.toml). */
const LIST_TOOLS_TIMEOUT_MS = 10_000;
/** The session whose enablement the CLI uses: every source on, so every tool can be found. */
const CLI_SESSION = "cli";

/** Options of `searchToolsCommand`. */
export interface SearchToolsOptions {
  query: string;
  maxResults: number;
  json: boolean;
  /** `--config` (`extensions_config.json` or `science.toml`): add the tools of the servers that answer. */
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
 * found (`--config`, the environment, `./extensions_config.json` or `./science.toml`, whose local
 * functions are listed too) and its servers answer.
 * @param io output streams, environment and working directory
 * @param options query, result count, output format, config and manifest folders
 * @returns 0 (also when nothing matches)
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` for a bad config or manifest; ToolError for
 *   an unset `token_env` variable
 */
export async function searchToolsCommand(io: CliIo, options: SearchToolsOptions): Promise<ExitCode> {
  const registry = await SourceRegistry.fromDirs([builtinManifestDir(), ...(options.manifestDirs ?? [])]);
  const { science, runtimeOptions } = await withScienceProject({
    env: io.env,
    cwd: io.cwd,
    config: options.configPath,
  });
  const { config } = await resolveGovernanceConfig(runtimeOptions, io.env, io.cwd);
  const files = [science?.path, config.path].filter((p) => p !== undefined);
  const byName = new Map<string, SurfaceTool>();
  for (const tool of ToolSurface.fromManifests(registry.list(), { serverRouting: config.servers })) {
    byName.set(tool.name, tool);
  }
  // Without a config file the built-in default would only serve the built-in manifests again.
  if (files.length > 0 && config.servers.length > 0) {
    const extensions = runtimeOptions.extensions ?? [];
    for (const tool of await liveTools(io, registry, config, extensions, science))
      byName.set(tool.name, tool);
  }
  const tools = [...byName.values()];
  const hits = new ToolSearchIndex(tools).search(options.query, options.maxResults);
  if (options.json) {
    const report: SearchToolsReport = { results: hits };
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const from = files.length === 0 ? "built-in manifests" : `built-in manifests and ${files.join(" + ")}`;
  // Names and summaries of live tools are the servers' text: each field printed inert.
  io.stdout(terminalLine`${hits.length} of ${tools.length} tools (${from}) match "${options.query}"\n`);
  hits.forEach((hit, i) => {
    const summary = byName.get(hit.name)?.summary ?? "";
    io.stdout(
      terminalLine`${String(i + 1).padStart(3)}. ${hit.name}  score ${hit.score} (${hit.matchedIn.join(", ")})\n`,
    );
    io.stdout(terminalLine`     ${summary}\n`);
  });
  return 0;
}

/** The surface tools of every configured server and `science.toml` provider that answers; failures become warnings. */
async function liveTools(
  io: CliIo,
  registry: SourceRegistry,
  config: ExtensionsConfig,
  extensions: readonly GovernanceExtension[],
  science: ScienceProject | undefined,
): Promise<SurfaceTool[]> {
  const env = io.env;
  const createTransport = extensionTransports(extensions, undefined, env);
  const pool = new ServerPool(config.servers, { env, ...(createTransport ? { createTransport } : {}) });
  // Local functions are compiled when listed (the TypeScript compiler): they get the catalog's usual time.
  const catalog = new SourceCatalog({
    registry,
    pool,
    ...(science ? {} : { listToolsTimeoutMs: LIST_TOOLS_TIMEOUT_MS }),
  });
  try {
    const snapshot = await catalog.refresh();
    for (const id of pool.serverIds()) {
      const state = pool.state(id);
      if (state.status === "failed") {
        io.stderr(terminalLine`warning: server '${id}' unavailable: ${state.reason ?? "unknown reason"}\n`);
      }
    }
    const sessions = new SessionSettings();
    for (const source of snapshot.sources) await sessions.enableSource(CLI_SESSION, source.id);
    return new ToolSurface({ catalog, sessions, serverRouting: config.servers }).tools(CLI_SESSION);
  } finally {
    await pool.close();
  }
}
