/**
 * Which MCP servers a governance runtime starts: the extensions config (given, found, or the bundled
 * science sources) plus the servers of its extensions.
 */
import {
  defaultExtensionsConfigJson,
  type ExtensionsConfig,
  loadExtensionsConfig,
  parseExtensionsConfig,
} from "../config/index.js";
import type { GovernanceOptions } from "./governance-options.js";

/** What `resolveGovernanceConfig` found. */
export interface ResolvedGovernanceConfig {
  /** Every server: the extensions config's, then the extensions' servers. */
  config: ExtensionsConfig;
  /** Whether the bundled science sources were left out for standalone extensions (no config file). */
  bundledSourcesOmitted: boolean;
}

/**
 * Resolves the servers of `createGovernance`: `options.config` by the `--config` rules, then the
 * servers of `options.extensions`.
 * @param options the `config` and `extensions` options of `createGovernance`
 * @param env environment for config substitution
 * @param cwd working directory for relative paths
 * @returns the merged config
 * @throws GovernanceError `INVALID_CONFIG` naming the file and the problem
 */
export async function resolveGovernanceConfig(
  options: Pick<GovernanceOptions, "config" | "extensions">,
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<ResolvedGovernanceConfig> {
  const extensions = options.extensions ?? [];
  const standalone = extensions.some((e) => e.standalone === true);
  const given = options.config;
  let base: ExtensionsConfig;
  let bundledSourcesOmitted = false;
  if (typeof given === "string") base = await loadExtensionsConfig({ configPath: given, env, cwd });
  else if (given && "servers" in given) base = given;
  else if (given) base = parseExtensionsConfig(given, { env });
  else {
    const found = await loadExtensionsConfig({ env, cwd });
    // No config file anywhere: the bundled science sources, unless an extension stands on its own.
    bundledSourcesOmitted = found.path === undefined && standalone;
    base =
      found.path !== undefined || standalone
        ? found
        : parseExtensionsConfig(defaultExtensionsConfigJson(), { env });
  }
  const servers = extensions.flatMap((e) => e.servers);
  const config = servers.length === 0 ? base : { ...base, servers: [...base.servers, ...servers] };
  return { config, bundledSourcesOmitted };
}
