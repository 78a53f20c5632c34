/**
 * The Science ADK as a runtime extension: a `science.toml` project's providers join the same pool,
 * broker and ledger through the runtime's extension seam (see ARCHITECTURE.md). Apps pass
 * `scienceExtension()` to `createGovernance`; the CLI uses `createScienceGovernance`, which also finds
 * `./science.toml` on its own.
 */

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { requireGovernanceOption } from "../core/index.js";
import { createCappedFetch } from "../mcp/index.js";
import {
  createGovernance as createRuntime,
  type ExtensionTransport,
  type Governance,
  type GovernanceExtension,
  type GovernanceOptions,
} from "../runtime/index.js";
import { type CallTool, createCallTool } from "./call-tool.js";
import { FallbackHttpTransport } from "./fallback-http-transport.js";
import { loadLocalTools } from "./local-tools/load-local-tools.js";
import { createLocalToolTransport } from "./local-tools/local-tool-server.js";
import { providerWarnings, scienceServerConfigs } from "./science-providers.js";
import type { ScienceProvider } from "./science-toml.js";
import {
  assertProviderTokens,
  callTimeoutMs,
  loadScienceToml,
  providerToken,
  SCIENCE_TOML_FILE,
  type ScienceProject,
} from "./science-toml.js";

/** Options of `createScienceGovernance`: the runtime's, plus where the `science.toml` project is. */
export interface ScienceGovernanceOptions extends GovernanceOptions {
  /**
   * The Science ADK `science.toml` whose providers join the same pool and broker; `false` ignores it.
   * A `config` path ending in `.toml` counts as this. @default `./science.toml` when it exists
   */
  scienceToml?: string | false | undefined;
}

/** The governance runtime, with the `science.toml` project it loaded and the ADK's `callTool`. */
export interface ScienceGovernance extends Governance {
  /** The `science.toml` project, when one was found or given. */
  science?: ScienceProject | undefined;
  /**
   * One governed call by `provider.tool`, `mcp__source__tool` or an unambiguous bare name (the Science
   * ADK's `call_tool`); with `science.toml`'s `[run].node_timeout_s` as every call's deadline.
   */
  callTool: CallTool;
}

/**
 * Builds the governed runtime (`createGovernance`) with the `science.toml` project's providers added
 * (given, named by a `.toml` `config`, or `./science.toml` when it exists): what the CLI runs.
 * @param options config, manifests, data directory, stores, seams and the `science.toml` location
 * @returns the runtime; call `close()` when done
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem;
 *   ToolError when a `science.toml` `token_env` variable is unset
 */
export async function createScienceGovernance(
  options: ScienceGovernanceOptions = {},
): Promise<ScienceGovernance> {
  const { science, runtimeOptions } = await withScienceProject(options);
  const governance = await createRuntime(runtimeOptions);
  const callTool = createCallTool(governance.broker, governance.catalog, {
    timeoutMs: callTimeoutMs(science),
  });
  return { ...governance, science, callTool };
}

/**
 * The runtime options of a Science ADK setup: `science.toml` found or given, loaded, its tokens
 * checked, and its providers added as a runtime extension.
 * @param options the options of `createScienceGovernance`
 * @returns the project (if any) and the options to hand the runtime
 * @throws GovernanceError `INVALID_CONFIG` for a bad `science.toml`; ToolError for an unset `token_env`
 */
export async function withScienceProject(
  options: ScienceGovernanceOptions,
): Promise<{ science: ScienceProject | undefined; runtimeOptions: GovernanceOptions }> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { scienceToml: _given, ...runtimeOptions } = options;
  const tomlPath = sciencePath(options, cwd);
  const science = tomlPath === undefined ? undefined : await loadScienceToml(tomlPath, cwd);
  if (!science) return { science, runtimeOptions };
  assertProviderTokens(science, env);
  const isTomlConfig = typeof options.config === "string" && options.config.endsWith(".toml");
  return {
    science,
    runtimeOptions: {
      ...runtimeOptions,
      config: isTomlConfig ? undefined : options.config,
      extensions: [projectExtension(science, env), ...(options.extensions ?? [])],
    },
  };
}

/** The runtime extension of a loaded project: its providers as servers, with their own transports. */
function projectExtension(
  science: ScienceProject,
  env: Record<string, string | undefined>,
): GovernanceExtension {
  // Files of local providers left out when their transports were built (the catalog lists them first).
  const skipped = new Set<string>();
  return {
    name: `science.toml (${science.path})`,
    servers: scienceServerConfigs(science),
    // A science.toml-only project names its own providers.
    standalone: true,
    createTransport: providerTransports(science.providers, env, (line) => skipped.add(line)),
    warnings: (catalog) => [...providerWarnings(science.providers, catalog), ...skipped],
  };
}

/** Options of {@link scienceExtension}. */
export interface ScienceExtensionOptions {
  /** The `science.toml` file (relative to `cwd`). @default `./science.toml` */
  path?: string | undefined;
  /** Working directory for relative paths. @default process.cwd() */
  cwd?: string | undefined;
  /** Environment holding the providers' `token_env` variables. @default process.env */
  env?: Record<string, string | undefined> | undefined;
}

/** A loaded `science.toml` project as a `createGovernance` extension. */
export interface ScienceExtension extends GovernanceExtension {
  /** The project. */
  project: ScienceProject;
  /**
   * The ADK's `call_tool` over a runtime built with this extension: one governed call by
   * `provider.tool`, `mcp__source__tool` or an unambiguous bare name, with `[run].node_timeout_s` as
   * every call's deadline.
   * @param options `governance`: the runtime `createGovernance` returned
   * @returns the call function
   */
  callTool(options: { governance: Pick<Governance, "broker" | "catalog"> }): CallTool;
}

/**
 * Loads a Science ADK `science.toml` project as an extension of `createGovernance`: its providers
 * (local function tools, remote MCP servers) join the same pool, broker and ledger.
 * @param options where the file is, and the environment of its `token_env` variables
 * @returns the extension, with the project and its `callTool`
 * @throws GovernanceError `INVALID_CONFIG` for a missing or bad `science.toml`; ToolError for an unset
 *   `token_env` variable
 * @example
 * const science = await scienceExtension({ path: "science.toml" });
 * const governance = await createGovernance({ extensions: [science] });
 * const callTool = science.callTool({ governance });
 * const { value } = await callTool("stats.mean_ratio", { numerator: [2], denominator: [1] });
 */
export async function scienceExtension(options: ScienceExtensionOptions = {}): Promise<ScienceExtension> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const project = await loadScienceToml(options.path ?? SCIENCE_TOML_FILE, cwd);
  assertProviderTokens(project, env);
  return {
    ...projectExtension(project, env),
    project,
    callTool: (options) => {
      requireGovernanceOption(options, "science.callTool");
      const { governance } = options;
      return createCallTool(governance.broker, governance.catalog, { timeoutMs: callTimeoutMs(project) });
    },
  };
}

/** `science.toml`: given, named by a `.toml` `config`, or found in the working directory. */
function sciencePath(options: ScienceGovernanceOptions, cwd: string): string | undefined {
  if (options.scienceToml === false) return undefined;
  if (typeof options.scienceToml === "string") return options.scienceToml;
  if (typeof options.config === "string" && options.config.endsWith(".toml")) return options.config;
  const found = resolve(cwd, SCIENCE_TOML_FILE);
  return existsSync(found) ? found : undefined;
}

/**
 * The transports of a project's providers in the shared server pool: local folders as in-process MCP
 * servers, remote providers over streamable HTTP (answers read under the response cap; falling back to
 * SSE) with the `token_env` bearer token
 * read only when connecting, so the secret never sits in a config object, a log or the ledger.
 * @param providers the providers of `science.toml`
 * @param env environment holding `token_env` variables and the Python interpreter
 * @param onSkipped receives a warning line per local file left out (a missing `tsx`, `typescript`, Python)
 * @returns the extension's transport factory; every other server goes to `fallback`
 */
function providerTransports(
  providers: readonly ScienceProvider[],
  env: Record<string, string | undefined>,
  onSkipped: (line: string) => void,
): ExtensionTransport {
  const byId = new Map(providers.map((p) => [p.id, p]));
  return async (config, fallback) => {
    const provider = byId.get(config.id);
    if (provider?.kind === "local") {
      const onSkippedFile = (line: string) => onSkipped(`warning: tool provider '${provider.id}': ${line}`);
      return createLocalToolTransport(
        provider.id,
        await loadLocalTools(provider.path, { env, onSkippedFile }),
      );
    }
    if (provider?.kind === "remote") {
      const token = providerToken(provider, env);
      const requestInit: RequestInit = {
        headers: { ...config.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      };
      const url = new URL(provider.url);
      return new FallbackHttpTransport(
        () => new StreamableHTTPClientTransport(url, { requestInit, fetch: createCappedFetch() }),
        () => new SSEClientTransport(url, { requestInit }),
      );
    }
    return fallback(config);
  };
}
