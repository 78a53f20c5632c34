import { join } from "node:path";
import { type CallTool, createCallTool } from "../adk/call-tool.js";
import { providerTransportFactory } from "../adk/provider-transport.js";
import { providerWarnings } from "../adk/science-providers.js";
import { callTimeoutMs, type ScienceProject } from "../adk/science-toml.js";
import { MemoryDownloadJobStore } from "../artifacts/download-job-store.js";
import { DownloadManager } from "../artifacts/download-manager.js";
import { downloadAuthorizationRequest } from "../artifacts/download-permission.js";
import { downloadJobsPath, SqliteDownloadJobStore } from "../artifacts/download-sqlite-job-store.js";
import type { ExtensionsConfig } from "../config/types.js";
import { Broker } from "../governance/broker.js";
import { type ContentStore, FileContentStore } from "../governance/content-store.js";
import { resolveDataDir } from "../governance/data-dir.js";
import { MemoryGrantStore } from "../governance/grant-store.js";
import type { Ledger } from "../governance/ledger.js";
import { builtinManifestDir } from "../governance/manifest-loader.js";
import { PermissionService } from "../governance/permission-service.js";
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
import type { GovernanceOptions } from "./governance-options.js";
import { localOrigins } from "./local-origins.js";
import { resolveGovernanceConfig } from "./resolve-governance-config.js";

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
  const { config, extensions, science } = await resolveGovernanceConfig(options, env, cwd);
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
    callTool: createCallTool(broker, catalog, { timeoutMs: callTimeoutMs(science) }),
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
