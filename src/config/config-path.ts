/** Where `extensions_config.json` is looked up. */
import { resolve } from "node:path";
import type { EnvMap } from "./env-substitution.js";

/** The default file name, looked up in the working directory. */
export const DEFAULT_CONFIG_FILE = "extensions_config.json";

/** Environment variables naming the config file, in order of precedence. */
export const CONFIG_PATH_ENV_VARS = ["SCIENCEGATE_CONFIG", "SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH"] as const;

/** Options of {@link resolveConfigPath}. */
export interface ResolveConfigPathOptions {
  /** The `--config` value (or an explicit path given in code). Empty means absent. */
  configPath?: string | undefined;
  /** The environment holding `SCIENCEGATE_CONFIG` / `SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`. */
  env: EnvMap;
  /** The directory relative paths are resolved against. */
  cwd: string;
}

/** A resolved config path. */
export interface ResolvedConfigPath {
  /** Absolute path of the file. */
  path: string;
  /** True when the user named the file (flag or env var); a named file that is missing is an error. */
  explicit: boolean;
  /** What named it: the `configPath` option (`--config`), one of the env vars, or the default. */
  source: "configPath" | (typeof CONFIG_PATH_ENV_VARS)[number] | "default";
}

/**
 * Picks the config file: `--config`, else `SCIENCEGATE_CONFIG`, else `SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`
 * else `<cwd>/extensions_config.json`. Empty values count as absent.
 * @param options the flag value, environment and working directory
 * @returns the absolute path, whether it was named explicitly, and by what
 * @example
 * resolveConfigPath({ env: {}, cwd: "/app" }) // { path: "/app/extensions_config.json", explicit: false }
 */
export function resolveConfigPath(options: ResolveConfigPathOptions): ResolvedConfigPath {
  const { configPath, env, cwd } = options;
  if (configPath !== undefined && configPath !== "") {
    return { path: resolve(cwd, configPath), explicit: true, source: "configPath" };
  }
  for (const name of CONFIG_PATH_ENV_VARS) {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (value !== undefined && value !== "")
      return { path: resolve(cwd, value), explicit: true, source: name };
  }
  return { path: resolve(cwd, DEFAULT_CONFIG_FILE), explicit: false, source: "default" };
}
