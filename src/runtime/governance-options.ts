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
 * Where the runtime keeps its own state (see `GovernanceOptions.storage`).
 * @example
 * await createGovernance({ storage: { postgres: process.env.DATABASE_URL, maxConnections: 5 } });
 */
export interface GovernanceStorage {
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

/** Options of `createGovernance`. Every store and seam has a working default. */
export interface GovernanceOptions {
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
  /**
   * PostgreSQL for the ledger, grants and download jobs instead of SQLite files, so that several
   * replicas share them. The file CAS (objects past the ledger's inline limit) stays in the data
   * directory, which replicas must then share too (or pass `store`). `ledger`, `grants` and
   * `jobStore` given here still win. @default `{ postgres: $SCIENCEGATE_DATABASE_URL }`
   */
  storage?: GovernanceStorage | undefined;
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
  extraction?: { limits?: Partial<PdfLimits> | undefined; extractor?: PdfExtractor | undefined } | undefined;
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
