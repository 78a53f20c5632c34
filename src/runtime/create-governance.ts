import { join } from "node:path";
import { createArtifactSource, DownloadManager } from "../artifacts/index.js";
import {
  BUNDLED_LLM_WIKI_SERVER_ID,
  BUNDLED_SOURCES_SERVER_ID,
  type ExtensionsConfig,
  type ServerConfig,
} from "../config/index.js";
import { GovernanceError, type PostgresDatabase } from "../core/index.js";
import {
  type ContentStore,
  FileContentStore,
  type LedgerReader,
  LedgerWriter,
  withLedgerObjects,
} from "../governance/audit/index.js";
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
import type { QuotaRule, RateLimitGroupConfig } from "../governance/rate-limit/index.js";
import {
  effectiveRateLimits,
  PostgresQuotaCounter,
  PostgresRateLimiter,
  parseQuotaRules,
  QuotaLimiter,
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
import type { GovernanceLimitOptions, GovernanceOptions } from "./governance-options.js";
import {
  CAS_DIR_NAME,
  OAUTH_DIR_NAME,
  openGovernanceStores,
  WORKSPACE_DIR_NAME,
} from "./governance-stores.js";
import { modelSampler } from "./model-sampler.js";
import { resolveGovernanceConfig, resolveGovernanceStorage } from "./resolve-governance-config.js";
import { serverStartError, serverStartFailures, serverStartWarnings } from "./start-failures.js";

/**
 * The one object an app creates: the server pool, catalog, broker, ledger and tool surface. It is
 * `AsyncDisposable`: `await using governance = await createGovernance()` closes it at the end of the
 * scope, as `close()` does.
 */
export interface Governance extends AsyncDisposable {
  config: ExtensionsConfig;
  /**
   * What did not start, one line each: `warning: server '<id>' unavailable: <reason>` for a configured
   * server whose tools could not be listed (e.g. `spawn … ENOENT`), and the extensions' own lines
   * (`warning: tool provider '<id>' unavailable: …` for a `science.toml` provider). Empty when every
   * server answered. With `mcp.failOnError`, a failure throws instead.
   */
  warnings: string[];
  pool: ToolServerPool;
  registry: SourceRegistry;
  catalog: SourceCatalog;
  broker: Broker;
  /** The ledger's reads: what the console, the CLI and evidence review look at. */
  ledger: LedgerReader;
  /**
   * The ledger's one writer: the broker's rows, the authorization rows and the download rows all go
   * through it (one queue, one group commit). Code that records something of its own uses it too.
   */
  ledgerWriter: LedgerWriter;
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
  /** Approval modes, human decisions, grants and authorization rows (the broker hook with `permissions.enforce`). */
  permissions: PermissionService;
  /** Whether the broker asks `permissions.authorize` (the approval gate needs it). */
  permissionsEnforced: boolean;
  sessions: SessionSettings;
  /** The limits the broker enforces per rate-limit group (manifests, `NCBI_API_KEY`, then `rateLimits`). */
  rateLimits: ReadonlyMap<string, RateLimitGroupConfig>;
  /** The quotas the broker enforces per principal (`quotas`, else `SCIENCEGATE_QUOTAS`); empty for none. */
  quotas: readonly QuotaRule[];
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
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Builds the governed runtime and lists every server's tools once. When a step fails, whatever this call
 * opened itself (the pool's servers and child processes, the ledger, grants and job store, the PostgreSQL pool) is
 * closed again before the error is thrown; stores and a pool the app passed in stay the app's to close.
 * @param options config, manifests, data directory, stores and seams
 * @returns the runtime; call `close()` when done
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem;
 *   `UPSTREAM_UNAVAILABLE` naming every server that could not start, with `mcp.failOnError` (or the
 *   config's `throwOnLoadError: true`)
 * @example
 * const governance = await createGovernance({ config: "extensions_config.json" });
 * const { result } = await governance.broker.invoke({ sourceId: "pubmed", toolId: "search", input: { query: "brca1" }, sessionId: "t1" });
 */
export async function createGovernance(options: GovernanceOptions = {}): Promise<Governance> {
  const { mcp = {}, manifests = {}, storage: stores = {}, permissions: permissionOptions = {} } = options;
  const { limits = {}, downloads: { fetch, ...network } = {} } = options;
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const clock = options.clock ? { clock: options.clock } : {};
  const { config } = await resolveGovernanceConfig(options, env, cwd);
  const storage = resolveGovernanceStorage(options, env);
  const extensions = options.extensions ?? [];
  const createTransport = extensionTransports(extensions, mcp.createTransport, env);
  const builtinDir = builtinManifestDir();
  const offered = offeredBuiltinServers(manifests.builtin, mcp.pool, config);
  const builtinDirs = BUNDLED_SERVER_IDS.some(offered) ? [builtinDir] : [];
  const registry = await SourceRegistry.fromDirs([...builtinDirs, ...(manifests.dirs ?? [])], {
    // A bundled source is offered only where its server is: otherwise it is noise in every listing.
    include: (manifest, dir) => dir !== builtinDir || offered(manifest.transport.mcpServerId),
  });
  const model = mcp.sampling?.model;
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
      mcp.pool ??
      own(
        new ServerPool(config.servers, {
          env,
          authorization,
          ...(createTransport ? { createTransport } : {}),
          upstreamRequests: { sampling: sampler !== undefined || mcp.sampling?.declare === true },
          ...clock,
        }),
      );
    const catalog = new SourceCatalog({ registry, pool, ...clock });
    opened.unshift(() => catalog.stop());
    const dataDir = resolveDataDir({ env, cwd, ...(stores.dataDir ? { dataDir: stores.dataDir } : {}) });
    const { ledger, grants, spool, jobStore, database } = await openGovernanceStores(
      stores,
      dataDir,
      storage,
      own,
    );
    const ledgerWriter = new LedgerWriter(ledger, { spool });
    opened.unshift(() => ledgerWriter.close());
    credentials =
      mcp.oauthCredentials ??
      (database
        ? await PostgresCredentialStore.open(database)
        : new FileCredentialStore(join(dataDir, OAUTH_DIR_NAME)));
    const oauthCredentials = credentials;
    // Small objects live in the ledger (written with their row), large ones in the CAS: one store reads both.
    const store = withLedgerObjects(
      stores.contentStore ?? new FileContentStore(join(dataDir, CAS_DIR_NAME)),
      ledger,
    );
    // One store behind both: a mode or switch set through either is the same state; with a database,
    // every replica's.
    const sessionState =
      stores.sessionState ??
      (database ? own(await openSharedSessionState(database)) : new MemorySessionStateStore());
    const permissions = new PermissionService({
      ledgerWriter,
      grants,
      state: sessionState,
      ...(permissionOptions.policy ? { policy: permissionOptions.policy } : {}),
      ...clock,
    });
    const sessions = new SessionSettings({ state: sessionState });
    const permissionsEnforced = !permissionOptions.authorize && permissionOptions.enforce !== false;
    // Downloads are broker calls (`artifact_download` of the built-ins' source): the same hook decides.
    const brokerAuthorize =
      permissionOptions.authorize ?? (permissionsEnforced ? permissions.authorize : undefined);
    const downloads = new DownloadManager({
      ledgerWriter,
      store,
      catalog,
      jobStore,
      sessions,
      workspaceDir: join(dataDir, WORKSPACE_DIR_NAME),
      ...(fetch ? { fetch } : {}),
      ...network,
      ...clock,
    });
    const rateLimits = effectiveRateLimits(registry.rateLimitGroups(), {
      env,
      ...(limits.rateLimits ? { overrides: limits.rateLimits } : {}),
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
    const quotaRules = quotaRulesOf(limits.quotas, env);
    const quotas =
      quotaRules.length === 0
        ? undefined
        : new QuotaLimiter({
            rules: quotaRules,
            counter: database ? own(await PostgresQuotaCounter.open(database)) : undefined,
            ...clock,
          });
    // The built-ins' in-process source: `artifact_download` and `paper_extract_pdf` are broker calls.
    const artifacts = createArtifactSource({
      downloads,
      catalog,
      dataDir,
      limits: options.extraction?.limits,
      extractor: options.extraction?.extractor,
      ...clock,
    });
    const broker = new Broker({
      inProcess: [artifacts],
      catalog,
      pool,
      ledgerWriter,
      store,
      sessions,
      limiter,
      quotas,
      allowedOrigins: (source) => localOrigins(source, config),
      serverTimeoutMs: (serverId) => config.servers.find((s) => s.id === serverId)?.toolCallTimeoutMs,
      ...(brokerAuthorize ? { authorize: brokerAuthorize } : {}),
      sampling: sampler,
      permissionEpoch: (sessionId) => permissions.epoch(sessionId),
      ...clock,
    });
    const surface = new ToolSurface({ catalog, sessions, serverRouting: config.servers });
    const failures = serverStartFailures(await catalog.start(), pool);
    if (failures.length > 0 && (mcp.failOnError ?? config.throwOnLoadError ?? false)) {
      throw serverStartError(failures);
    }
    // An extension that words its own warnings (the Science ADK's providers) speaks for its servers.
    const named = new Set(extensions.flatMap((e) => (e.warnings ? e.servers.map((s) => s.id) : [])));
    const warnings = [
      ...serverStartWarnings(failures, named),
      ...extensions.flatMap((e) => e.warnings?.(catalog) ?? []),
    ];
    const warn = options.onWarning ?? ((line: string) => process.stderr.write(`${line}\n`));
    for (const line of warnings) warn(line);
    const graceMs = options.closeGraceMs;
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= (() => {
        // Admission stops before close() returns; both grace periods run at once, and the stores
        // stay open until every started call and download has written its row.
        const drains = [broker.close(graceMs), downloads.close(graceMs)];
        return closeEach([
          () => catalog.stop(),
          ...drains.map((drain) => () => drain),
          () => pool.close(),
          () => ledgerWriter.close(),
          () => ledger.close(),
          () => grants.close(),
          () => sessionState.close(),
          () => jobStore.close(),
          () => limiter.close?.(),
          () => quotas?.close(),
          () => database?.close(),
        ]);
      })();
      return closing;
    };
    return {
      config,
      warnings,
      pool,
      registry,
      catalog,
      broker,
      ledger,
      ledgerWriter,
      store,
      dataDir,
      oauthCredentials,
      permissions,
      permissionsEnforced,
      sessions,
      rateLimits,
      quotas: quotaRules,
      surface,
      downloads,
      tools: (sessionId) => surface.tools(sessionId),
      refresh: () => catalog.refresh(),
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    // The step's own failure is what the caller needs; a close that fails as well must not hide it.
    await closeEach(opened).catch(() => undefined);
    throw error;
  }
}

type Closer = () => unknown;

/**
 * The quota rules of a runtime: the option's, else `SCIENCEGATE_QUOTAS`.
 * @throws GovernanceError `INVALID_CONFIG` naming the rule (and the variable when it came from there)
 */
function quotaRulesOf(
  given: GovernanceLimitOptions["quotas"],
  env: Record<string, string | undefined>,
): readonly QuotaRule[] {
  if (given !== undefined) return typeof given === "string" ? parseQuotaRules(given) : given;
  const text = env.SCIENCEGATE_QUOTAS?.trim();
  if (!text) return [];
  try {
    return parseQuotaRules(text);
  } catch (error) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `SCIENCEGATE_QUOTAS: ${error instanceof Error ? error.message : String(error)}`,
      { data: { field: "SCIENCEGATE_QUOTAS" }, cause: error },
    );
  }
}

/** The servers the built-in manifests describe (the bundled sources and the LLM Wiki bridge). */
const BUNDLED_SERVER_IDS = [BUNDLED_SOURCES_SERVER_ID, BUNDLED_LLM_WIKI_SERVER_ID];

/**
 * Which servers' built-in manifests the runtime loads: `manifests.builtin: true` all, `false` none, and
 * by default those of the servers it runs (the app's `pool`, else the config's), so an app that
 * configures only its own servers sees no bundled source.
 * @param builtin the `manifests.builtin` option
 * @param pool the app's pool (`mcp.pool`), if any
 * @param config the resolved servers
 * @returns whether a built-in manifest of this server id is loaded
 */
function offeredBuiltinServers(
  builtin: boolean | undefined,
  pool: ToolServerPool | undefined,
  config: ExtensionsConfig,
): (serverId: string) => boolean {
  if (builtin !== undefined) return () => builtin;
  const servers = new Set(pool?.serverIds() ?? config.servers.map((s) => s.id));
  return (serverId) => servers.has(serverId);
}

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
