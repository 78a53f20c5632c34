import { join } from "node:path";
import { DownloadManager, downloadAuthorizationRequest } from "../artifacts/index.js";
import type { ExtensionsConfig, ServerConfig } from "../config/index.js";
import type { PostgresDatabase } from "../core/index.js";
import type { Ledger } from "../governance/audit/index.js";
import { type ContentStore, FileContentStore, withLedgerObjects } from "../governance/audit/index.js";
import { Broker } from "../governance/broker/index.js";
import { type CatalogSnapshot, SourceCatalog } from "../governance/catalog/index.js";
import type { SourceManifest } from "../governance/manifests/index.js";
import { builtinManifestDir, SourceRegistry } from "../governance/manifests/index.js";
import {
  MemorySessionStateStore,
  PermissionService,
  PostgresSessionStateStore,
  SessionSettings,
  type SessionStateStore,
} from "../governance/permissions/index.js";
import type { RateLimitGroupConfig } from "../governance/rate-limit/index.js";
import {
  effectiveRateLimits,
  PostgresRateLimiter,
  type RateLimitAdmission,
  RateLimiter,
} from "../governance/rate-limit/index.js";
import type { OAuthCredentialStore, ToolServerPool } from "../mcp/index.js";
import {
  createOAuthProvider,
  createSdkTransport,
  FileCredentialStore,
  PostgresCredentialStore,
  ServerPool,
  type ServerPoolOptions,
} from "../mcp/index.js";
import type { SurfaceTool } from "../visibility/index.js";
import { ToolSurface } from "../visibility/index.js";
import { resolveDataDir } from "./data-dir.js";
import type { GovernanceExtension } from "./governance-extension.js";
import type { GovernanceOptions } from "./governance-options.js";
import {
  CAS_DIR_NAME,
  OAUTH_DIR_NAME,
  openGovernanceStores,
  WORKSPACE_DIR_NAME,
} from "./governance-stores.js";
import { modelSampler } from "./model-sampler.js";
import { resolveGovernanceConfig, resolveGovernanceStorage } from "./resolve-governance-config.js";

/** The one object an app creates: the server pool, catalog, broker, ledger and tool surface. */
export interface Governance {
  config: ExtensionsConfig;
  /** The extensions' warnings at start (e.g. `warning: tool provider … unavailable` lines). */
  warnings: string[];
  pool: ToolServerPool;
  registry: SourceRegistry;
  catalog: SourceCatalog;
  broker: Broker;
  ledger: Ledger;
  /**
   * Every object the rows reference: the ledger's own (small) objects and the content store (the
   * app's `store`, else the file CAS), read as one store (`withLedgerObjects`).
   */
  store: ContentStore;
  /**
   * The data directory: ledger, CAS, grants, jobs, workspace and extracted papers live under it (with
   * `storage.postgres`, the ledger, grants and jobs live in the database instead).
   */
  dataDir: string;
  /**
   * The OAuth credentials of protected servers (tokens never leave it: not in the ledger, not in a log
   * line); `sciencegate auth` and the console's Sources page store them here.
   */
  oauthCredentials: OAuthCredentialStore;
  /** Approval modes, human decisions, grants and authorization rows (the broker hook with `enforcePermissions`). */
  permissions: PermissionService;
  /** Whether the broker asks `permissions.authorize` (the approval gate needs it). */
  permissionsEnforced: boolean;
  sessions: SessionSettings;
  /** The limits the broker enforces per rate-limit group (manifests, `NCBI_API_KEY`, then `rateLimits`). */
  rateLimits: ReadonlyMap<string, RateLimitGroupConfig>;
  surface: ToolSurface;
  /**
   * Governed downloads into `<dataDir>/workspace` (jobs in the app's `jobStore`, else in PostgreSQL with
   * `storage.postgres`, else in `<dataDir>/jobs.sqlite`, or in memory when the app passes its own
   * `ledger` and no `dataDir`),
   * authorized by the broker's permission hook and recorded as `artifact_download` ledger rows.
   */
  downloads: DownloadManager;
  /** The session's governed tools (registry → catalog availability → session enablement). */
  tools(sessionId: string): SurfaceTool[];
  /** Re-lists every server's tools now. */
  refresh(): Promise<CatalogSnapshot>;
  /**
   * Shuts the runtime down, in order: stops following tool-list changes; stops admitting calls and
   * downloads (a later one is refused with `CANCELLED` and writes no row, since it never started); lets
   * the running ones finish, or cancels them after `closeGraceMs` (`CANCELLED`), each still writing its
   * one ledger row; then closes every server (no child process left), the ledger, the grants and the job
   * store (also those the app passed in), and last the PostgreSQL pool it opened for `storage`. Every resource is closed even when one fails; the failure is
   * then rethrown (an `AggregateError` when several fail). Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/**
 * Builds the governed runtime and lists every server's tools once. When a step fails, whatever this call
 * opened itself (the pool's servers and child processes, the ledger, grants and job store, the PostgreSQL pool) is
 * closed again before the error is thrown; stores and a pool the app passed in stay the app's to close.
 * @param options config, manifests, data directory, stores and seams
 * @returns the runtime; call `close()` when done
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem
 * @example
 * const governance = await createGovernance({ config: "extensions_config.json" });
 * const { result } = await governance.broker.invoke({ sourceId: "pubmed", toolId: "search", input: { query: "brca1" }, session: "t1" });
 */
export async function createGovernance(options: GovernanceOptions = {}): Promise<Governance> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const clock = options.clock ? { clock: options.clock } : {};
  const { config, bundledSourcesOmitted } = await resolveGovernanceConfig(options, env, cwd);
  const storage = resolveGovernanceStorage(options, env);
  const extensions = options.extensions ?? [];
  const createTransport = extensionTransports(extensions, options.createTransport, env);
  const registry = await SourceRegistry.fromDirs([
    // Standalone extension servers without the bundled sources: their manifests would only be noise.
    ...(options.builtinManifests === false ||
    (options.builtinManifests === undefined && bundledSourcesOmitted)
      ? []
      : [builtinManifestDir()]),
    ...(options.manifestDirs ?? []),
  ]);
  const model = options.sampling?.model;
  const sampler = model === undefined ? undefined : modelSampler(model);
  // What this call opens itself, released (last opened first) when a later step fails.
  const opened: Closer[] = [];
  const own = <T extends { close(): unknown }>(resource: T): T => {
    opened.unshift(() => resource.close());
    return resource;
  };
  // Set once the stores are open; the pool asks for it only when it connects, after that.
  let credentials: OAuthCredentialStore | undefined;
  const authorization = (server: ServerConfig) =>
    credentials !== undefined && usesOAuth(server)
      ? createOAuthProvider({ server, store: credentials, env, ...clock })
      : undefined;
  try {
    const pool =
      options.pool ??
      own(
        new ServerPool(config.servers, {
          env,
          authorization,
          ...(createTransport ? { createTransport } : {}),
          upstreamRequests: { sampling: sampler !== undefined || options.sampling?.declare === true },
          ...clock,
        }),
      );
    const catalog = new SourceCatalog({ registry, pool, ...clock });
    opened.unshift(() => catalog.stop());
    const dataDir = resolveDataDir({ env, cwd, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
    const { ledger, grants, jobStore, database } = await openGovernanceStores(options, dataDir, storage, own);
    credentials =
      options.oauthCredentials ??
      (database
        ? await PostgresCredentialStore.open(database)
        : new FileCredentialStore(join(dataDir, OAUTH_DIR_NAME)));
    const oauthCredentials = credentials;
    // Small objects live in the ledger (written with their row), large ones in the CAS: one store reads both.
    const store = withLedgerObjects(
      options.store ?? new FileContentStore(join(dataDir, CAS_DIR_NAME)),
      ledger,
    );
    // One store behind both: a mode or switch set through either is the same state; with a database,
    // every replica's.
    const sessionState =
      options.sessionState ??
      (database ? own(await openSharedSessionState(database)) : new MemorySessionStateStore());
    const permissions = new PermissionService({
      ledger,
      grants,
      state: sessionState,
      ...(options.permissionPolicy ? { policy: options.permissionPolicy } : {}),
      ...clock,
    });
    const sessions = new SessionSettings({ state: sessionState });
    const permissionsEnforced = !options.authorize && options.enforcePermissions !== false;
    // Downloads follow the broker: the same hook sees them as `artifact_download` requests.
    const brokerAuthorize = options.authorize ?? (permissionsEnforced ? permissions.authorize : undefined);
    const downloads = new DownloadManager({
      ledger,
      store,
      catalog,
      jobStore,
      sessions,
      recorded: (invocationId) => broker.recorded(invocationId),
      workspaceDir: join(dataDir, WORKSPACE_DIR_NAME),
      ...(brokerAuthorize
        ? { authorize: (plan) => brokerAuthorize(downloadAuthorizationRequest(catalog, plan)) }
        : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...options.downloads,
      ...clock,
    });
    const rateLimits = effectiveRateLimits(registry.rateLimitGroups(), {
      env,
      ...(options.rateLimits ? { overrides: options.rateLimits } : {}),
    });
    // With a database, one set of limits holds for every replica; else for this process.
    const limiter: RateLimitAdmission & { close?(): Promise<void> } = database
      ? own(
          await PostgresRateLimiter.open(database, {
            groups: rateLimits,
            listen: true,
            leaseTtlMs: storage.postgres?.rateLimitLeaseTtlMs,
            ...clock,
          }),
        )
      : new RateLimiter({ groups: rateLimits, ...clock });
    const broker = new Broker({
      catalog,
      pool,
      ledger,
      store,
      sessions,
      limiter,
      allowedOrigins: (source) => localOrigins(source, config),
      serverTimeoutMs: (serverId) => config.servers.find((s) => s.id === serverId)?.toolCallTimeoutMs,
      ...(brokerAuthorize ? { authorize: brokerAuthorize } : {}),
      sampling: sampler,
      permissionEpoch: (sessionId) => permissions.epoch(sessionId),
      ...clock,
    });
    const surface = new ToolSurface({ catalog, sessions, serverRouting: config.servers });
    await catalog.start();
    const warnings = extensions.flatMap((e) => e.warnings?.(catalog) ?? []);
    const warn = options.onWarning ?? ((line: string) => process.stderr.write(`${line}\n`));
    for (const line of warnings) warn(line);
    const graceMs = options.closeGraceMs;
    let closing: Promise<void> | undefined;
    return {
      config,
      warnings,
      pool,
      registry,
      catalog,
      broker,
      ledger,
      store,
      dataDir,
      oauthCredentials,
      permissions,
      permissionsEnforced,
      sessions,
      rateLimits,
      surface,
      downloads,
      tools: (sessionId) => surface.tools(sessionId),
      refresh: () => catalog.refresh(),
      close: () => {
        closing ??= (() => {
          // Admission stops before close() returns; both grace periods run at once, and the stores
          // stay open until every started call and download has written its row.
          const drains = [broker.close(graceMs), downloads.close(graceMs)];
          return closeEach([
            () => catalog.stop(),
            ...drains.map((drain) => () => drain),
            () => pool.close(),
            () => ledger.close(),
            () => grants.close(),
            () => sessionState.close(),
            () => jobStore.close(),
            () => limiter.close?.(),
            () => database?.close(),
          ]);
        })();
        return closing;
      },
    };
  } catch (error) {
    // The step's own failure is what the caller needs; a close that fails as well must not hide it.
    await closeEach(opened).catch(() => undefined);
    throw error;
  }
}

type Closer = () => unknown;

/**
 * The session state every replica on one PostgreSQL database shares: approval modes, per-session
 * source switches and recorded decisions (a `PostgresSessionStateStore`). Pass it as `sessionState`;
 * the runtime closes it, the database stays the caller's to close afterwards.
 * @param db the open database
 * @returns the store, loaded and following other replicas' changes
 * @throws GovernanceError `INVALID_CONFIG` for a newer schema; `UPSTREAM_UNAVAILABLE` when unreachable
 */
export function openSharedSessionState(db: PostgresDatabase): Promise<SessionStateStore> {
  return PostgresSessionStateStore.open(db);
}

/**
 * Runs every closer in order, also after one throws.
 * @param closers the close steps
 * @throws the one failure, or an `AggregateError` of several
 */
async function closeEach(closers: readonly Closer[]): Promise<void> {
  const errors: unknown[] = [];
  for (const close of closers) {
    try {
      await close();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} resources failed to close.`);
}

/**
 * The pool's transport factory: each extension may build its own servers' transports.
 * @param extensions the runtime's extensions
 * @param given the app's transport factory, if any
 * @param env environment of stdio children
 * @returns the factory to hand `ServerPool`, or `given` when no extension builds transports
 */
export function extensionTransports(
  extensions: readonly GovernanceExtension[],
  given: ServerPoolOptions["createTransport"],
  env: Record<string, string | undefined>,
): ServerPoolOptions["createTransport"] {
  const builders = extensions.flatMap((e) => (e.createTransport ? [e.createTransport] : []));
  if (builders.length === 0) return given;
  const base: NonNullable<ServerPoolOptions["createTransport"]> =
    given ?? ((server) => createSdkTransport(server, { env }));
  return builders.reduce<NonNullable<ServerPoolOptions["createTransport"]>>(
    (fallback, build) => (server) => build(server, fallback),
    base,
  );
}

/**
 * The configured origin a private source may cite over plain HTTP: the LLM Wiki's
 * `SCIENCE_AGENT_LLM_WIKI_URL`, read from the same config entry the bridge gets, so Node-side citation
 * checks and the bridge's requests agree. Public sources keep HTTPS on `networkHosts` only.
 * @param source the source manifest (its data classification and MCP server id)
 * @param config the servers of the runtime
 * @returns the origins the broker lets the source's records cite; empty for a public source
 */
export function localOrigins(source: SourceManifest, config: ExtensionsConfig): string[] {
  if (source.governance.dataClassification === "public") return [];
  const server = config.servers.find((s) => s.id === source.transport.mcpServerId);
  const origin = server?.env.SCIENCE_AGENT_LLM_WIKI_URL;
  return origin ? [origin] : [];
}

/**
 * Whether a server's requests go through an OAuth provider: an http or sse server that does not turn
 * it off (`oauth: false`) and sends no Authorization header of its own (`headers`, `bearer_token_env`).
 * The provider acts only when the server answers 401 or 403; until then it sends stored tokens, if any.
 */
function usesOAuth(server: ServerConfig): boolean {
  if (server.transport === "stdio" || server.oauth === false) return false;
  return !Object.keys(server.headers).some((name) => name.toLowerCase() === "authorization");
}
