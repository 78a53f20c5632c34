/**
 * Which MCP servers a governance runtime starts: the extensions config (given, found, or the bundled
 * science sources) plus the providers of a `science.toml` project.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import {
  assertProviderTokens,
  loadScienceToml,
  SCIENCE_TOML_FILE,
  type ScienceProject,
  scienceServerConfigs,
} from "../adk/index.js";
import type { ExtensionsConfig } from "../config/index.js";
import { defaultExtensionsConfigJson, loadExtensionsConfig, parseExtensionsConfig } from "../config/index.js";
import type { GovernanceOptions } from "./governance-options.js";

/** What `resolveGovernanceConfig` found. */
export interface ResolvedGovernanceConfig {
  /** Every server: the extensions config's, then the `science.toml` providers. */
  config: ExtensionsConfig;
  /** The extensions config alone; its `path` is undefined when no config file was given or found. */
  extensions: ExtensionsConfig;
  /** The `science.toml` project, when one was given or found. */
  science: ScienceProject | undefined;
}

/**
 * Resolves the servers of `createGovernance`: `options.config` by the `--config` rules, and the
 * `science.toml` project (`options.scienceToml`, a `.toml` `config`, or `./science.toml`) whose
 * providers join them.
 * @param options the `config` and `scienceToml` options of `createGovernance`
 * @param env environment for config substitution and the providers' `token_env` variables
 * @param cwd working directory for relative paths
 * @returns the merged config, the extensions config alone and the science project
 * @throws GovernanceError `INVALID_CONFIG` naming the file and the problem;
 *   ToolError when a `science.toml` `token_env` variable is unset
 */
export async function resolveGovernanceConfig(
  options: Pick<GovernanceOptions, "config" | "scienceToml">,
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<ResolvedGovernanceConfig> {
  const tomlPath = sciencePath(options, cwd);
  const science = tomlPath === undefined ? undefined : await loadScienceToml(tomlPath, cwd);
  if (science) assertProviderTokens(science, env);
  const extensions = await resolveConfig(
    typeof options.config === "string" && options.config.endsWith(".toml") ? undefined : options.config,
    env,
    cwd,
    science !== undefined,
  );
  const config: ExtensionsConfig = science
    ? { ...extensions, servers: [...extensions.servers, ...scienceServerConfigs(science)] }
    : extensions;
  return { config, extensions, science };
}

/** `science.toml`: given, named by a `.toml` `config`, or found in the working directory. */
function sciencePath(
  options: Pick<GovernanceOptions, "config" | "scienceToml">,
  cwd: string,
): string | undefined {
  if (options.scienceToml === false) return undefined;
  if (typeof options.scienceToml === "string") return options.scienceToml;
  if (typeof options.config === "string" && options.config.endsWith(".toml")) return options.config;
  const found = resolve(cwd, SCIENCE_TOML_FILE);
  return existsSync(found) ? found : undefined;
}

async function resolveConfig(
  given: GovernanceOptions["config"],
  env: Record<string, string | undefined>,
  cwd: string,
  hasScienceToml = false,
): Promise<ExtensionsConfig> {
  if (typeof given === "string") return loadExtensionsConfig({ configPath: given, env, cwd });
  if (given && "servers" in given) return given;
  if (given) return parseExtensionsConfig(given, { env });
  const found = await loadExtensionsConfig({ env, cwd });
  // No config file anywhere: the bundled science sources, unless science.toml declares the providers.
  if (found.path !== undefined || hasScienceToml) return found;
  return parseExtensionsConfig(defaultExtensionsConfigJson(), { env });
}
