import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type {
  DownloadFetch,
  DownloadJobStore,
  DownloadNetworkOptions,
  PdfExtractor,
  PdfLimits,
} from "../artifacts/index.js";
import type { ExtensionsConfig } from "../config/index.js";
import type { Clock } from "../core/index.js";
import type { ContentStore, LedgerStore } from "../governance/audit/index.js";
import type {
  Authorize,
  GrantStore,
  PermissionPolicy,
  SessionStateStore,
} from "../governance/permissions/index.js";
import type { QuotaRule, RateLimitGroupConfig } from "../governance/rate-limit/index.js";
import type { OAuthCredentialStore, ServerPoolOptions, ToolServerPool } from "../mcp/index.js";
import type { GovernanceExtension } from "./governance-extension.js";

/**
 * `GovernanceOptions.storage`: where the runtime keeps its state. By default SQLite files and a file
 * CAS in the data directory; `postgres` moves the ledger, grants and download jobs into one database
 * that replicas share (the file CAS stays in the data directory, which replicas must then share too,
 * or pass `contentStore`). A store passed here wins over both; like every store the runtime opened,
 * it is closed by `close()`.
 * @example
 * await createGovernance({ storage: { postgres: process.env.DATABASE_URL, maxConnections: 5 } });
 */
export interface GovernanceStorage {
  /** Data directory for the ledger, CAS, grants and jobs. @default `$SCIENCEGATE_HOME` or `./.sciencegate` */
  dataDir?: string | undefined;
  /**
   * Where the audit rows are stored; the runtime writes them through its one `LedgerWriter`
   * (`Governance.ledgerWriter`). @default SQLite at `<dataDir>/ledger.sqlite`
   */
  ledger?: LedgerStore | undefined;
  /** Content-addressed objects past the ledger's inline limit. @default a file CAS at `<dataDir>/cas` */
  contentStore?: ContentStore | undefined;
  /**
   * Session grants and permission epochs. @default SQLite at `<dataDir>/grants.sqlite`; in memory when
   * the app passes its own `ledger` and no `dataDir` (an in-memory setup leaves no files behind)
   */
  grants?: GrantStore | undefined;
  /**
   * Approval modes, per-session source switches and recorded human decisions. Replicas that share one
   * (a `PostgresSessionStateStore`) honour each other's approvals and switches. @default in memory
   */
  sessionState?: SessionStateStore | undefined;
  /**
   * The download jobs (a shared store lets replicas resume each other's tool calls without
   * downloading twice). @default SQLite at `<dataDir>/jobs.sqlite`; in memory when the app passes its
   * own `ledger` and no `dataDir`
   */
  jobStore?: DownloadJobStore | undefined;
  /**
   * A `postgres://` URL: the ledger (with its small objects), the grants and the download jobs live
   * in this database, which every replica of the app shares; each store migrates its own tables once.
   * Empty means absent. @default `$SCIENCEGATE_DATABASE_URL`, else SQLite files in the data directory
   */
  postgres?: string | undefined;
  /**
   * Connections at most in the one pool those stores share (each replica has its own pool, so the
   * server sees up to replicas × this). @default 10
   */
  maxConnections?: number | undefined;
  /**
   * How long a rate-limit lease or queued caller of this replica outlives the replica's last heartbeat,
   * in ms (renewed every third of it): a replica that dies holding slots gives them back within this
   * time, and one whose event loop stalls longer loses its leases while its calls still run. A whole
   * number, at least 1000. Only with a database. @default 10000
   */
  rateLimitLeaseTtlMs?: number | undefined;
}

/**
 * The flat form of {@link GovernanceOptions} the runtime reads internally (`flattenGovernanceOptions`).
 * @internal
 */
export interface FlatGovernanceOptions {
  /**
   * The MCP servers: a path to `extensions_config.json`, a raw `{mcpServers}` object, or a parsed
   * config. @default `--config` rules: `$SCIENCEGATE_CONFIG`, `$SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`,
   * `./extensions_config.json`, else the bundled science sources
   */
  config?: string | ExtensionsConfig | { mcpServers: Record<string, unknown> } | undefined;
  /** Servers added by a layer above the runtime (the Science ADK's `science.toml` providers). */
  extensions?: readonly GovernanceExtension[] | undefined;
  /** Receives the start-up warning lines (`governance.warnings`). @default writes them to stderr */
  onWarning?: (line: string) => void;
  /**
   * Whether a server (or `science.toml` provider) whose tools cannot be listed at start fails
   * `createGovernance` with `UPSTREAM_UNAVAILABLE` naming each one, instead of a warning line.
   * @default the config's `throwOnLoadError` (the `MultiServerMCPClient` key), else false
   */
  failOnServerError?: boolean | undefined;
  /** More manifest folders, after the built-in ones. */
  manifestDirs?: string[];
  /**
   * Load the built-in manifests of the bundled sources: `true` all of them, `false` none.
   * @default those whose server runs (`sciencegate-sources`, `llm-wiki` in the config or the `pool`), so
   *   an app that configures only its own servers lists no bundled source
   */
  builtinManifests?: boolean;
  /** PostgreSQL settings (see `GovernanceOptions.storage`). */
  storage?: Pick<GovernanceStorage, "postgres" | "maxConnections" | "rateLimitLeaseTtlMs"> | undefined;
  /** Data directory for the ledger and CAS. @default `$SCIENCEGATE_HOME` or `./.sciencegate` */
  dataDir?: string;
  /** Environment for config substitution and stdio children. @default process.env */
  env?: Record<string, string | undefined>;
  /** Working directory for relative paths. @default process.cwd() */
  cwd?: string;
  /**
   * The permission hook of the broker, for every call (downloads are `sciencegate/artifact_download`
   * calls); wins over `enforcePermissions`. @default `permissions.authorize`
   */
  authorize?: Authorize;
  /**
   * Hand the broker `permissions.authorize`: dangerous calls and downloads
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
  /**
   * Approval modes, per-session source switches and recorded human decisions. Replicas that share one
   * (`openSharedSessionState(db)`, a `PostgresSessionStateStore`) honour each other's approvals and
   * switches. Like a passed `grants`, it is closed by `close()`.
   * @default in memory (this process only)
   */
  sessionState?: SessionStateStore | undefined;
  /**
   * Where the rows are stored; the runtime writes them through its one `LedgerWriter`
   * (`Governance.ledgerWriter`). @default SQLite at `<dataDir>/ledger.sqlite`
   */
  ledger?: LedgerStore;
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
  /**
   * Quotas per principal: how many calls of a tool, or of a source, each principal may make per time
   * window (`QuotaRule`s, or their text form `pubmed/search=100/1h, *=600/1h`). With a database every
   * replica shares the counts. A call past its quota is `QUOTA_EXCEEDED`. Empty means none.
   * @default `$SCIENCEGATE_QUOTAS` (the text form), else none
   */
  quotas?: readonly QuotaRule[] | string | undefined;
  /**
   * The HTTP seam of `artifact_download` (tests serve bytes without network). The default connects only
   * to addresses that passed the download address check; an injected fetch must pin its own connections.
   * @default createPinnedHttpsFetch (`node:https`, see `DownloadManagerOptions.fetch`)
   */
  fetch?: DownloadFetch;
  /**
   * Deadlines and the address check of `artifact_download`: `headersTimeoutMs` (30 s), `idleTimeoutMs`
   * (30 s), `jobTimeoutMs` (10 min), `lookup` (the DNS seam) and `allowPrivateAddresses` (false), and
   * `progressPersistMs` (1 s, how often a transfer's bytes are saved and a cancel from another process
   * is looked for), as documented on `DownloadManagerOptions`. @default those defaults
   */
  downloads?: DownloadNetworkOptions | undefined;
  /**
   * The bounds and parser of `paper_extract_pdf`: `limits` (50 MiB, 200 pages, 20 M characters, 512 MiB
   * of memory, 120 s) and `extractor` (`auto`: pdftotext when on the PATH, else pdf.js).
   * @default those defaults
   */
  extraction?: GovernanceExtractionOptions | undefined;
  /**
   * How long `close()` lets running tool calls and downloads finish before it cancels them (`CANCELLED`,
   * each still with its ledger row), in ms of `clock`. @default 5000
   */
  closeGraceMs?: number | undefined;
  /**
   * Upstream servers' sampling requests (they ask the client's LLM for a completion). With a `model`,
   * the pool declares sampling and the model answers each request (recorded as an authorization row
   * with the request and the answer); `declare: true` declares it without a model, for callers that
   * relay it themselves (the gateway to its own client). @default none: sampling is not declared, and
   * a server that asks anyway is refused with an error naming this option
   * @example
   * await createGovernance({ sampling: { model: new ChatAnthropic({ model: "claude-sonnet-4-5" }) } });
   */
  sampling?: { model?: BaseChatModel | undefined; declare?: boolean | undefined } | undefined;
  /**
   * Where the OAuth tokens of protected http/sse servers are kept (`sciencegate auth <server>` stores
   * them; the pool sends and refreshes them). @default PostgreSQL with `storage.postgres`, else
   * `<dataDir>/oauth/<server>.json` (0600)
   */
  oauthCredentials?: OAuthCredentialStore | undefined;
}

/** `GovernanceOptions.mcp`: how the upstream MCP servers are reached. */
export interface GovernanceMcpOptions {
  /** An existing pool (for example an in-memory one in tests). @default a `ServerPool` over the config */
  pool?: ToolServerPool | undefined;
  /** Transport factory of the default pool (tests pass in-memory transports). */
  createTransport?: ServerPoolOptions["createTransport"] | undefined;
  /**
   * Whether a server (or extension server) whose tools cannot be listed at start fails
   * `createGovernance` with `UPSTREAM_UNAVAILABLE` naming each one, instead of a warning line.
   * @default the config's `throwOnLoadError` (the `MultiServerMCPClient` key), else false
   */
  failOnError?: boolean | undefined;
  /**
   * Where the OAuth tokens of protected http/sse servers are kept (`sciencegate auth <server>` stores
   * them; the pool sends and refreshes them). @default PostgreSQL with `storage.postgres`, else
   * `<dataDir>/oauth/<server>.json` (0600)
   */
  oauthCredentials?: OAuthCredentialStore | undefined;
  /**
   * Upstream servers' sampling requests (they ask the client's LLM for a completion). With a `model`,
   * the pool declares sampling and the model answers each request (recorded as an authorization row);
   * `declare: true` declares it without a model, for callers that relay it themselves (the gateway).
   * @default none: sampling is not declared, and a server that asks anyway is refused
   */
  sampling?: { model?: BaseChatModel | undefined; declare?: boolean | undefined } | undefined;
}

/** `GovernanceOptions.manifests`: which source manifests govern the tools. */
export interface GovernanceManifestOptions {
  /** More manifest folders, after the built-in ones. */
  dirs?: readonly string[] | undefined;
  /**
   * Load the built-in manifests of the bundled sources: `true` all of them, `false` none.
   * @default those whose server runs (`sciencegate-sources`, `llm-wiki` in the config or the pool)
   */
  builtin?: boolean | undefined;
}

/** `GovernanceOptions.permissions`: who decides whether a call or download runs. */
export interface GovernancePermissionOptions {
  /**
   * Refuse dangerous calls and downloads without a recorded decision (the approval gate and
   * `artifact_download`'s card record them), a grant or `always_allow` with "approval required".
   * `false` lets every call and download through unasked (and the approval gate refuses to work).
   * @default true
   */
  enforce?: boolean | undefined;
  /**
   * Replaces the permission hook of the broker, for every call (downloads are
   * `sciencegate/artifact_download` calls); wins over `enforce`. @default the runtime's `permissions.authorize`
   */
  authorize?: Authorize | undefined;
  /** Strict mode, the app's danger predicate, the default approval mode. @default `{}` */
  policy?: PermissionPolicy | undefined;
}

/** `GovernanceOptions.limits`: rate limits and quotas on top of the manifests'. */
export interface GovernanceLimitOptions {
  /**
   * Per rate-limit group, limits that replace the manifests' (e.g. `{"ncbi-eutils": {rateLimitPerSecond: 8}}`).
   * @default none; `NCBI_API_KEY` in `env` raises `ncbi-eutils` to 10 requests/s on its own
   */
  rateLimits?: Record<string, RateLimitGroupConfig> | undefined;
  /**
   * Quotas per principal (`QuotaRule`s, or their text form `pubmed/search=100/1h, *=600/1h`); with a
   * database every replica shares the counts. A call past its quota is `QUOTA_EXCEEDED`.
   * @default `$SCIENCEGATE_QUOTAS`, else none
   */
  quotas?: readonly QuotaRule[] | string | undefined;
}

/**
 * `GovernanceOptions.downloads`: the network of `artifact_download`: its HTTP seam, deadlines and
 * address check (`headersTimeoutMs`, `idleTimeoutMs`, `jobTimeoutMs`, `lookup`,
 * `allowPrivateAddresses`, `progressPersistMs`).
 */
export interface GovernanceDownloadOptions extends DownloadNetworkOptions {
  /**
   * The HTTP seam (tests serve bytes without network). The default connects only to addresses that
   * passed the download address check; an injected fetch must pin its own connections.
   * @default a pinned `node:https` fetch
   */
  fetch?: DownloadFetch | undefined;
}

/** `GovernanceOptions.extraction`: the bounds and parser of `paper_extract_pdf`. */
export interface GovernanceExtractionOptions {
  /**
   * Per-PDF bounds: 50 MiB, 200 pages, 20 M characters, 512 MiB of worker memory, 120 s.
   * @default those bounds
   */
  limits?: Partial<PdfLimits> | undefined;
  /** `auto` (pdftotext when on the PATH, else pdf.js), `pdftotext` or `pdfjs`. @default "auto" */
  extractor?: PdfExtractor | undefined;
}

/**
 * Options of `createGovernance`, grouped by concern. Every store and seam has a working default.
 * @example
 * await createGovernance({
 *   config: "extensions_config.json",
 *   storage: { dataDir: ".sciencegate" },
 *   permissions: { policy: { defaultMode: "ask" } },
 *   limits: { quotas: "*=600/1h" },
 * });
 */
export interface GovernanceOptions {
  /**
   * The MCP servers: a path to `extensions_config.json`, a raw `{mcpServers}` object, or a parsed
   * config. @default `--config` rules: `$SCIENCEGATE_CONFIG`, `$SCIENCE_AGENT_EXTENSIONS_CONFIG_PATH`,
   * `./extensions_config.json`, else the bundled science sources
   */
  config?: string | ExtensionsConfig | { mcpServers: Record<string, unknown> } | undefined;
  /** Layers that add servers to the same pool, broker and ledger (the ADK's `scienceExtension`). */
  extensions?: readonly GovernanceExtension[] | undefined;
  /** How upstream servers are reached: pool, transports, start failures, OAuth tokens, sampling. */
  mcp?: GovernanceMcpOptions | undefined;
  /** Which manifests govern the tools. */
  manifests?: GovernanceManifestOptions | undefined;
  /** Where rows, objects, grants, session state and download jobs live. */
  storage?: GovernanceStorage | undefined;
  /** Permission enforcement, the permission hook and the policy. */
  permissions?: GovernancePermissionOptions | undefined;
  /** Rate-limit overrides and quotas. */
  limits?: GovernanceLimitOptions | undefined;
  /** The network of `artifact_download`. */
  downloads?: GovernanceDownloadOptions | undefined;
  /** The bounds and parser of `paper_extract_pdf`. */
  extraction?: GovernanceExtractionOptions | undefined;
  /** Environment for config substitution and stdio children. @default process.env */
  env?: Record<string, string | undefined> | undefined;
  /** Working directory for relative paths. @default process.cwd() */
  cwd?: string | undefined;
  /** The time source of the broker, rate limits, deadlines and downloads. @default the system clock */
  clock?: Clock | undefined;
  /** Receives the start-up warning lines (`governance.warnings`). @default writes them to stderr */
  onWarning?: ((line: string) => void) | undefined;
  /**
   * How long `close()` lets running tool calls and downloads finish before it cancels them
   * (`CANCELLED`, each still with its ledger row), in ms of `clock`. @default 5000
   */
  closeGraceMs?: number | undefined;
}

/**
 * The runtime's flat view of the grouped options (one place that knows both shapes).
 * @param options the options of `createGovernance`
 * @returns the same settings, flat
 */
export function flattenGovernanceOptions(options: GovernanceOptions): FlatGovernanceOptions {
  const { mcp = {}, manifests = {}, storage = {}, permissions = {}, limits = {}, downloads = {} } = options;
  const { fetch, ...network } = downloads;
  const { dataDir, ledger, contentStore, grants, sessionState, jobStore, ...database } = storage;
  const flat: FlatGovernanceOptions = {
    config: options.config,
    extensions: options.extensions,
    failOnServerError: mcp.failOnError,
    storage: database,
    sessionState,
    quotas: limits.quotas,
    downloads: network,
    closeGraceMs: options.closeGraceMs,
    sampling: mcp.sampling,
    oauthCredentials: mcp.oauthCredentials,
  };
  const set = <K extends keyof FlatGovernanceOptions>(
    key: K,
    value: FlatGovernanceOptions[K] | undefined,
  ) => {
    if (value !== undefined) flat[key] = value;
  };
  set("onWarning", options.onWarning);
  set("manifestDirs", manifests.dirs ? [...manifests.dirs] : undefined);
  set("builtinManifests", manifests.builtin);
  set("dataDir", dataDir);
  set("env", options.env);
  set("cwd", options.cwd);
  set("authorize", permissions.authorize);
  set("enforcePermissions", permissions.enforce);
  set("permissionPolicy", permissions.policy);
  set("grants", grants);
  set("ledger", ledger);
  set("store", contentStore);
  set("jobStore", jobStore);
  set("pool", mcp.pool);
  set("createTransport", mcp.createTransport);
  set("clock", options.clock);
  set("rateLimits", limits.rateLimits);
  set("fetch", fetch);
  set("extraction", options.extraction);
  return flat;
}

const GROUPS = ["mcp", "manifests", "storage", "permissions", "limits", "downloads", "extraction"] as const;

/**
 * Merges options the way a caller layering its own over defaults means it: later parts win per field,
 * inside each group too (a plain spread would replace a whole group).
 * @param parts the options, weakest first
 * @returns the merged options
 */
export function mergeGovernanceOptions(
  ...parts: readonly (GovernanceOptions | undefined)[]
): GovernanceOptions {
  const merged: Record<string, unknown> = {};
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) {
      if (value === undefined) continue;
      const before = merged[key];
      merged[key] =
        (GROUPS as readonly string[]).includes(key) && typeof before === "object" && before !== null
          ? { ...before, ...(value as object) }
          : value;
    }
  }
  return merged as GovernanceOptions;
}
