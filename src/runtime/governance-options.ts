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
