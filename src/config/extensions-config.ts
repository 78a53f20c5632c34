/**
 * Reading `extensions_config.json` (an `mcpServers` file, or a `MultiServerMCPClient` config):
 * path resolution, JSON, env substitution, validation with every issue reported at once, normalization.
 */
import { type ConfigIssue, configError, describeValue, fromZodIssues } from "./config-issues.js";
import { resolveConfigPath } from "./config-path.js";
import type { EnvMap } from "./env-substitution.js";
import { rawExtensionsSchema } from "./extensions-schema.js";
import { normalizeServer } from "./normalize-server.js";
import { readJsonFile } from "./read-json-file.js";
import type { ExtensionsConfig, ServerConfig } from "./types.js";

/** Names a config object that did not come from a file, in messages. */
const IN_CODE_LABEL = "extensions config (given in code)";

/** Context of {@link validateExtensionsConfig} and {@link parseExtensionsConfig}. */
export interface ExtensionsConfigContext {
  /** Environment for `$VAR` substitution. @default process.env */
  env?: EnvMap | undefined;
  /** The file the JSON came from; named in every message and kept as `config.path`. */
  path?: string | undefined;
}

/** The result of {@link validateExtensionsConfig}, like zod's `safeParse`. */
export type ExtensionsConfigValidation =
  | { ok: true; config: ExtensionsConfig }
  | { ok: false; issues: ConfigIssue[] };

/**
 * Validates and normalizes a parsed config, collecting every issue of the file instead of stopping at the first.
 * @param json the parsed `extensions_config.json`, or a `MultiServerMCPClient` config object
 * @param context environment and source file
 * @returns `{ok: true, config}` or `{ok: false, issues}` with one `{path, message}` per problem; never throws
 * @example
 * const result = validateExtensionsConfig({ mcpServers: { wiki: { url: "$WIKI_URL" } } }, { env: { WIKI_URL: "http://127.0.0.1:8100" } });
 */
export function validateExtensionsConfig(
  json: unknown,
  context: ExtensionsConfigContext = {},
): ExtensionsConfigValidation {
  const env = context.env ?? process.env;
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    const message = `the top level must be a JSON object such as {"mcpServers": {}}, not ${describeValue(json)}. Wrap the server map in {"mcpServers": ...}.`;
    return { ok: false, issues: [{ path: "", message }] };
  }
  const parsed = rawExtensionsSchema.safeParse(json);
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues, json, []) };
  const issues: ConfigIssue[] = [];
  const servers: ServerConfig[] = [];
  // The input's own keys, not zod's output: zod drops a `__proto__` key, which must be reported instead.
  const rawServers = (json as { mcpServers?: Record<string, unknown> | null }).mcpServers ?? {};
  for (const [id, raw] of Object.entries(rawServers)) {
    const result = normalizeServer(id, raw, env);
    issues.push(...result.issues);
    if (result.server !== undefined) servers.push(result.server);
  }
  if (issues.length > 0) return { ok: false, issues };
  const config: ExtensionsConfig = { servers };
  if (context.path !== undefined) config.path = context.path;
  const throwOnLoadError = parsed.data.throwOnLoadError;
  if (typeof throwOnLoadError === "boolean") config.throwOnLoadError = throwOnLoadError;
  return { ok: true, config };
}

/**
 * The throwing twin of {@link validateExtensionsConfig}, for config objects passed in code.
 * @param json the parsed config
 * @param context environment and source file
 * @returns the normalized config
 * @throws GovernanceError `INVALID_CONFIG` naming the file, every bad field and its fix;
 *   `data: {file, path, reason, issues}`
 */
export function parseExtensionsConfig(
  json: unknown,
  context: ExtensionsConfigContext = {},
): ExtensionsConfig {
  const result = validateExtensionsConfig(json, context);
  if (!result.ok) throw configError(context.path ?? IN_CODE_LABEL, result.issues);
  return result.config;
}

/** Options of {@link loadExtensionsConfig}. */
export interface LoadExtensionsConfigOptions {
  /** The `--config` value; takes precedence over `SCIENCEGATE_CONFIG` and `SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`. */
  configPath?: string | undefined;
  /** Environment for the path variables and `$VAR` substitution. @default process.env */
  env?: EnvMap | undefined;
  /** Directory that relative paths and the default file are resolved against. @default process.cwd() */
  cwd?: string | undefined;
  /** Fail when no file is found at the default path either. @default false */
  required?: boolean | undefined;
}

/**
 * Finds, reads and validates `extensions_config.json`.
 * @param options `--config` value, environment, working directory, and whether a file is required
 * @returns the normalized config with `path` set; `{servers: []}` when the default file is absent and not required
 * @throws GovernanceError `INVALID_CONFIG` when a named file (flag or env var) is missing, when `required` and
 *   no file exists, or when the file is unreadable, not JSON or invalid (all issues in one message)
 * @example
 * const config = await loadExtensionsConfig({ configPath: args.config });
 */
export async function loadExtensionsConfig(
  options: LoadExtensionsConfigOptions = {},
): Promise<ExtensionsConfig> {
  const env = options.env ?? process.env;
  const resolved = resolveConfigPath({
    configPath: options.configPath,
    env,
    cwd: options.cwd ?? process.cwd(),
  });
  const read = await readJsonFile(resolved.path);
  if (!read.found) {
    if (resolved.explicit) {
      const namedBy = resolved.source === "configPath" ? "--config (configPath)" : resolved.source;
      const message = `the file does not exist (named by ${namedBy}). Create it, or correct the path.`;
      throw configError(resolved.path, [{ path: "", message }]);
    }
    if (options.required === true) {
      const message =
        'no config file was found. Create it with {"mcpServers": {...}}, pass --config FILE, or set SCIENCEGATE_CONFIG.';
      throw configError(resolved.path, [{ path: "", message }]);
    }
    return { servers: [] };
  }
  return parseExtensionsConfig(read.json, { env, path: resolved.path });
}
