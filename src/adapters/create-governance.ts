import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type CallTool, createCallTool } from "../adk/call-tool.js";
import { providerTransportFactory } from "../adk/provider-transport.js";
import { providerWarnings, scienceServerConfigs } from "../adk/science-providers.js";
import {
  assertProviderTokens,
  loadScienceToml,
  SCIENCE_TOML_FILE,
  type ScienceProject,
} from "../adk/science-toml.js";
import type { DownloadFetch } from "../artifacts/download-fetch.js";
import { type DownloadJobStore, MemoryDownloadJobStore } from "../artifacts/download-job-store.js";
import { DownloadManager } from "../artifacts/download-manager.js";
import { downloadAuthorizationRequest } from "../artifacts/download-permission.js";
import { downloadJobsPath, SqliteDownloadJobStore } from "../artifacts/download-sqlite-job-store.js";
import { defaultExtensionsConfigJson } from "../config/default-config.js";
import { loadExtensionsConfig, parseExtensionsConfig } from "../config/extensions-config.js";
import type { ExtensionsConfig } from "../config/types.js";
import { Broker } from "../governance/broker.js";
import type { Authorize } from "../governance/broker-types.js";
import type { Clock } from "../governance/clock.js";
import { type ContentStore, FileContentStore } from "../governance/content-store.js";
import { resolveDataDir } from "../governance/data-dir.js";
import { type GrantStore, MemoryGrantStore } from "../governance/grant-store.js";
import type { Ledger } from "../governance/ledger.js";
import { builtinManifestDir } from "../governance/manifest-loader.js";
import type { SourceManifest } from "../governance/manifest-schema.js";
import { PermissionService } from "../governance/permission-service.js";
import type { PermissionPolicy } from "../governance/permission-types.js";
import type { RateLimitGroupConfig } from "../governance/rate-limit-config.js";
import { RateLimiter } from "../governance/rate-limiter.js";
import { SessionSettings } from "../governance/session-settings.js";
import { type CatalogSnapshot, SourceCatalog } from "../governance/source-catalog.js";
import { SourceRegistry } from "../governance/source-registry.js";
import { grantStorePath, SqliteGrantStore } from "../governance/sqlite-grant-store.js";
import { SqliteLedger } from "../governance/sqlite-ledger.js";
import { ServerPool, type ServerPoolOptions } from "../mcp/server-pool.js";
import { createSdkTransport } from "../mcp/transports.js";
import type { ToolServerPool } from "../mcp/types.js";
import type { SurfaceTool } from "../visibility/surface-tool.js";
import { ToolSurface } from "../visibility/tool-surface.js";
import { effectiveRateLimits } from "./effective-rate-limits.js";

/** Options of `createGovernance`. Every store and seam has a working default. */
export interface GovernanceOptions {
  /**
   * The MCP servers: a path to `extensions_config.json`, a raw `{mcpServers}` object, or a parsed
   * config. @default `--config` rules: `$SCIENCEGATE_CONFIG`, `$SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`,
   * `./extensions_config.json`, else the bundled science sources
   */
  config?: string | ExtensionsConfig | { mcpServers: Record<string, unknown> };
  /**
   * The Science ADK `science.toml` whose providers join the same pool and broker; `false` ignores it.
   * A `config` path ending in `.toml` counts as this. @default `./science.toml` when it exists
   */
  scienceToml?: string | false;
  /** Receives `warning: tool provider '<id>' unavailable: …` lines. @default writes them to stderr */
  onWarning?: (line: string) => void;
  /** More manifest folders, after the built-in ones. */
  manifestDirs?: string[];
  /** Load the built-in manifests of the bundled sources. @default true */
  builtinManifests?: boolean;
  /** Data directory for the ledger and CAS. @default `$SCIENCEGATE_HOME` or `./.sciencegate` */
  dataDir?: string;
  /** Environment for config substitution and stdio children. @default process.env */
  env?: Record<string, string | undefined>;
  /** Working directory for relative paths. @default process.cwd() */
  cwd?: string;
  /**
   * The permission hook of the broker and of downloads (which it sees as `artifact_download` requests,
   * see `downloadAuthorizationRequest`); wins over `enforcePermissions`. @default `permissions.authorize`
   */
  authorize?: Authorize;
  /**
   * Hand the broker and the download manager `permissions.authorize`: dangerous calls and downloads
   * without a recorded decision (the approval gate and `artifact_download`'s card record them), a
   * grant or `always_allow` are refused with "approval required". `false` lets every call and every
   * download through unasked (and the approval gate refuses to work). @default true
   */
  enforcePermissions?: boolean;
  /** The permission policy (strict mode, the app's danger predicate, default approval mode). @default `{}` */
  permissionPolicy?: PermissionPolicy;
  /**
   * Session grants and permission epochs. @default SQLite at `<dataDir>/grants.sqlite`; in memory when
   * the app passes its own `ledger` and no `dataDir` (an in-memory setup leaves no files behind)
   */
  grants?: GrantStore;
  /** @default SQLite at `<dataDir>/ledger.sqlite` */
  ledger?: Ledger;
  /** @default a file CAS at `<dataDir>/cas` */
  store?: ContentStore;
  /**
   * The download jobs (a shared store, e.g. Postgres, lets replicas resume each other's tool calls
   * without downloading twice). Like a passed `ledger` or `grants`, it is closed by `close()`.
   * @default SQLite at `<dataDir>/jobs.sqlite`; in memory when the app passes its own `ledger` and no
   *   `dataDir`
   */
  jobStore?: DownloadJobStore;
  /** An existing pool (for example an in-memory one in tests). @default a `ServerPool` over the config */
  pool?: ToolServerPool;
  /** Transport factory of the default pool (tests pass in-memory transports). */
  createTransport?: ServerPoolOptions["createTransport"];
  /** @default systemClock */
  clock?: Clock;
  /**
   * Per rate-limit group, limits that replace the manifests' (e.g. `{"ncbi-eutils": {rateLimitPerSecond: 8}}`).
   * @default none; `NCBI_API_KEY` in `env` raises `ncbi-eutils` to 10 requests/s on its own
   */
  rateLimits?: Record<string, RateLimitGroupConfig>;
  /** The HTTP seam of `artifact_download` (tests serve bytes without network). @default globalThis.fetch */
  fetch?: DownloadFetch;
}

/** The one object an app creates: the server pool, catalog, broker, ledger and tool surface. */
export interface Governance {
  config: ExtensionsConfig;
  /** The `science.toml` project, when one was found or given. */
  science?: ScienceProject;
  /** One governed call by `provider.tool` or unambiguous bare name (Science ADK `call_tool`). */
  callTool: CallTool;
  /** Tool providers that could not be listed at start (`warning: tool provider …` lines). */
  warnings: string[];
  pool: ToolServerPool;
  registry: SourceRegistry;
  catalog: SourceCatalog;
  broker: Broker;
  ledger: Ledger;
  store: ContentStore;
  /** The data directory: ledger, CAS, grants, jobs, workspace and extracted papers live under it. */
  dataDir: string;
  /** Approval modes, human decisions, grants and authorization rows (the broker hook with `enforcePermissions`). */
  permissions: PermissionService;
  /** Whether the broker asks `permissions.authorize` (the approval gate needs it). */
  permissionsEnforced: boolean;
  sessions: SessionSettings;
  /** The limits the broker enforces per rate-limit group (manifests, `NCBI_API_KEY`, then `rateLimits`). */
  rateLimits: ReadonlyMap<string, RateLimitGroupConfig>;
  surface: ToolSurface;
  /**
   * Governed downloads into `<dataDir>/workspace` (jobs in the app's `jobStore`, else in
   * `<dataDir>/jobs.sqlite`, or in memory when the app passes its own `ledger` and no `dataDir`),
   * authorized by the broker's permission hook and recorded as `artifact_download` ledger rows.
   */
  downloads: DownloadManager;
  /** The session's governed tools (registry → catalog availability → session enablement). */
  tools(sessionId: string): SurfaceTool[];
  /** Re-lists every server's tools now. */
  refresh(): Promise<CatalogSnapshot>;
  /**
   * Stops following list changes, closes every server (no child process left), the ledger, the grants
   * and the job store (also those the app passed in).
   */
  close(): Promise<void>;
}

/**
 * Builds the governed runtime and lists every server's tools once.
 * @param options config, manifests, data directory, stores and seams
 * @returns the runtime; call `close()` when done
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem;
 *   ToolError when a `science.toml` `token_env` variable is unset
 * @example
 * const governance = await createGovernance({ config: "extensions_config.json" });
 * const { result } = await governance.broker.invoke({ sourceId: "pubmed", toolId: "search", input: { query: "brca1" }, session: "t1" });
 */
export async function createGovernance(options: GovernanceOptions = {}): Promise<Governance> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const clock = options.clock ? { clock: options.clock } : {};
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
  const baseTransport: NonNullable<ServerPoolOptions["createTransport"]> =
    options.createTransport ?? ((server) => createSdkTransport(server, { env }));
  const createTransport = science
    ? providerTransportFactory(science.providers, { env, fallback: baseTransport })
    : options.createTransport;
  const registry = await SourceRegistry.fromDirs([
    // A science.toml-only project names its own providers; the bundled sources' manifests would only be noise.
    ...(options.builtinManifests === false ||
    (options.builtinManifests === undefined && science && extensions.path === undefined)
      ? []
      : [builtinManifestDir()]),
    ...(options.manifestDirs ?? []),
  ]);
  const pool =
    options.pool ??
    new ServerPool(config.servers, {
      env,
      ...(createTransport ? { createTransport } : {}),
      ...clock,
    });
  const catalog = new SourceCatalog({ registry, pool, ...clock });
  const dataDir = resolveDataDir({ env, cwd, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const ledger = options.ledger ?? (await SqliteLedger.open(join(dataDir, "ledger.sqlite")));
  const store = options.store ?? new FileContentStore(join(dataDir, "cas"));
  const grants =
    options.grants ??
    (options.ledger && !options.dataDir
      ? new MemoryGrantStore()
      : await SqliteGrantStore.open(grantStorePath(dataDir)));
  const permissions = new PermissionService({
    ledger,
    grants,
    ...(options.permissionPolicy ? { policy: options.permissionPolicy } : {}),
    ...clock,
  });
  const sessions = new SessionSettings();
  const jobStore =
    options.jobStore ??
    (options.ledger && !options.dataDir
      ? new MemoryDownloadJobStore()
      : await SqliteDownloadJobStore.open(downloadJobsPath(dataDir)));
  const permissionsEnforced = !options.authorize && options.enforcePermissions !== false;
  // Downloads follow the broker: the same hook sees them as `artifact_download` requests.
  const brokerAuthorize = options.authorize ?? (permissionsEnforced ? permissions.authorize : undefined);
  const downloads = new DownloadManager({
    ledger,
    store,
    catalog,
    jobStore,
    workspaceDir: join(dataDir, "workspace"),
    ...(brokerAuthorize
      ? { authorize: (plan) => brokerAuthorize(downloadAuthorizationRequest(catalog, plan)) }
      : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...clock,
  });
  const rateLimits = effectiveRateLimits(registry.rateLimitGroups(), {
    env,
    ...(options.rateLimits ? { overrides: options.rateLimits } : {}),
  });
  const broker = new Broker({
    catalog,
    pool,
    ledger,
    store,
    sessions,
    limiter: new RateLimiter({
      groups: rateLimits,
      ...clock,
    }),
    allowedOrigins: (source) => localOrigins(source, config),
    ...(brokerAuthorize ? { authorize: brokerAuthorize } : {}),
    ...clock,
  });
  const surface = new ToolSurface({ catalog, sessions, serverRouting: config.servers });
  await catalog.start();
  const warnings = science ? providerWarnings(science.providers, catalog) : [];
  const warn = options.onWarning ?? ((line: string) => process.stderr.write(`${line}\n`));
  for (const line of warnings) warn(line);
  return {
    config,
    ...(science ? { science } : {}),
    callTool: createCallTool(broker, catalog),
    warnings,
    pool,
    registry,
    catalog,
    broker,
    ledger,
    store,
    dataDir,
    permissions,
    permissionsEnforced,
    sessions,
    rateLimits,
    surface,
    downloads,
    tools: (sessionId) => surface.tools(sessionId),
    refresh: () => catalog.refresh(),
    close: async () => {
      catalog.stop();
      await pool.close();
      await ledger.close();
      await grants.close();
      await jobStore.close();
    },
  };
}

/** `science.toml`: given, named by a `.toml` `config`, or found in the working directory. */
function sciencePath(options: GovernanceOptions, cwd: string): string | undefined {
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

/**
 * The configured origin a private source may cite over plain HTTP: the LLM Wiki's
 * `SCIENCE_AGENT_LLM_WIKI_URL`, read from the same config entry the bridge gets, so Node-side citation
 * checks and the bridge's requests agree (seeds §5). Public sources keep HTTPS on `networkHosts` only.
 */
function localOrigins(source: SourceManifest, config: ExtensionsConfig): string[] {
  if (source.governance.dataClassification === "public") return [];
  const server = config.servers.find((s) => s.id === source.transport.mcpServerId);
  const origin = server?.env.SCIENCE_AGENT_LLM_WIKI_URL;
  return origin ? [origin] : [];
}
