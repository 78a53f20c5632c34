/** The public shapes of governed downloads: plans, requests, progress and results. */

import type { ArtifactCandidate } from "../contract/index.js";
import type { Clock } from "../core/index.js";
import type { ContentStore, LedgerWriter } from "../governance/audit/index.js";
import type { SessionSettings } from "../governance/permissions/index.js";
import type { ManifestLookup } from "./download-candidate.js";
import type { DownloadFetch } from "./download-fetch.js";
import type { DownloadLookup, PrivateAddressAllowance } from "./download-host-check.js";
import type { DownloadJobStatus, DownloadJobStore } from "./download-job-store.js";

/** The default size cap: 50 MiB. */
export const DEFAULT_DOWNLOAD_MAX_BYTES = 50 * 1024 * 1024;

/** What a download is about to do: the permission card's facts (file, source, destination). */
export interface DownloadPlan {
  planId: string;
  /** The successful MCP invocation whose result carried the candidate. */
  mcpInvocationId: string;
  candidate: ArtifactCandidate;
  license: string;
  destinationPath: string;
  sessionId: string;
  /**
   * Who the download is for: only this principal's grants, approval mode and decisions apply, and its
   * rows and its job carry it.
   */
  principal?: string | undefined;
  threadId?: string;
  toolCallId?: string;
}

/** Options of `DownloadManager`. */
export interface DownloadManagerOptions {
  /**
   * The ledger's one writer: its reads hold the invocation that returned each candidate (the rows of
   * downloads are the broker's, see `createArtifactSource`).
   */
  ledgerWriter: LedgerWriter;
  /** The CAS holding that invocation's normalized result. */
  store: ContentStore;
  /** Source manifests (their `networkHosts`), usually the `SourceCatalog`. */
  catalog: ManifestLookup;
  /**
   * Per-session source switches: a download from a source switched off for the requesting session is
   * `SOURCE_DISABLED`, as a direct call is. `createGovernance` passes the broker's. @default manifest `enabledByDefault`
   */
  sessions?: SessionSettings;
  /** `<dataDir>/workspace`: every download lands inside it. */
  workspaceDir: string;
  /** @default a `MemoryDownloadJobStore` */
  jobStore?: DownloadJobStore;
  /**
   * The HTTP transport. The default (`createPinnedHttpsFetch`) resolves each connection through `lookup`
   * and connects only to addresses that pass `allowPrivateAddresses`, so a DNS answer that changes after
   * the address check (rebinding) reaches nothing. An injected fetch gets the same per-request address
   * check, but resolves the host again itself: pinning its connections is its own job.
   * @default createPinnedHttpsFetch({ lookup, allowance: allowPrivateAddresses })
   */
  fetch?: DownloadFetch;
  /** @default systemClock */
  clock?: Clock;
  /** @default 50 MiB */
  maxBytes?: number;
  /** Transfer attempts per run before the job fails. @default 4 */
  maxAttempts?: number;
  /** First backoff delay, doubled per attempt. @default 500 */
  initialBackoffMs?: number;
  /**
   * Per request (the first and each redirect), the longest wait until response headers, address check
   * included; hitting it is a retryable `TIMEOUT` naming `headersTimeoutMs`. `Infinity` turns it off.
   * @default 30_000
   */
  headersTimeoutMs?: number;
  /**
   * The longest wait for the next body bytes; hitting it is a retryable `TIMEOUT` naming
   * `idleTimeoutMs` (the next attempt resumes with Range). `Infinity` turns it off.
   * @default 30_000
   */
  idleTimeoutMs?: number;
  /**
   * The deadline of one run of a job: every attempt, retry and backoff. Hitting it fails the job with a
   * `TIMEOUT` naming `jobTimeoutMs`, not retried. `Infinity` turns it off.
   * @default 600_000 (10 min)
   */
  jobTimeoutMs?: number;
  /**
   * Resolves a host before each request (the address check), and each connection of the default fetch.
   * @default `node:dns/promises` lookup, all addresses
   */
  lookup?: DownloadLookup;
  /**
   * Downloads refuse (`PERMISSION_DENIED`) a host that resolves to a loopback, private, link-local,
   * unique-local, CGNAT, unspecified, multicast or reserved address (IPv4-mapped IPv6 included), on
   * every redirect hop too. `true` allows them all; a list allows these host names, addresses and CIDR
   * ranges (`["mirror.lab.internal", "10.20.0.0/16"]`).
   * @default false
   */
  allowPrivateAddresses?: PrivateAddressAllowance;
  /**
   * While a job transfers, how often (in ms of `clock`) its `bytesDownloaded` is saved in the job store,
   * so another process (`sciencegate jobs list`, a console) sees it move, and its row is re-read: a
   * `cancelled` another process wrote there stops the run within one interval, as a local `cancel` does.
   * At most one write per interval, none when no bytes came. `Infinity` turns the ticks off (the bytes are
   * then saved only with status changes, and a cancel from elsewhere is found at the next one).
   * @default 1000
   */
  progressPersistMs?: number;
  /** @default crypto.randomUUID */
  newId?: () => string;
}

/** The network limits of downloads, and how often progress is saved, that `createGovernance` takes as its `downloads` option. */
export type DownloadNetworkOptions = Pick<
  DownloadManagerOptions,
  | "headersTimeoutMs"
  | "idleTimeoutMs"
  | "jobTimeoutMs"
  | "lookup"
  | "allowPrivateAddresses"
  | "progressPersistMs"
>;

/** Progress of one job: a status change or a new byte count (see `DownloadManager.subscribe`). */
export interface DownloadProgress {
  jobId: string;
  candidateId: string;
  status: DownloadJobStatus;
  bytesDownloaded: number;
  totalBytes?: number;
}

/** Input of `downloadArtifact`. */
export interface DownloadRequest {
  mcpInvocationId: string;
  candidateId: string;
  /** Relative to the workspace. @default `downloads/<sourceId>/<file name>` */
  destinationPath?: string;
  sessionId: string;
  /** Who the download is for (see `DownloadPlan.principal`). @default none: the single user */
  principal?: string | undefined;
  threadId?: string;
  toolCallId?: string;
  /** Told of the transfer's progress (bytes so far, total when known). */
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * The caller's cancellation: once the job exists, aborting ends it `cancelled` (partial file removed,
   * one ledger row with `CANCELLED`); aborted earlier, the job ends so as soon as it starts.
   * @default none: only `cancel(jobId)` and `close()` stop it
   */
  signal?: AbortSignal | undefined;
}

/** What a download returns, always at a terminal state. */
export interface DownloadResult {
  candidateId: string;
  planId: string;
  jobId: string;
  finalPath: string;
  actualChecksum?: string;
  bytesDownloaded: number;
  sourceId: string;
  sourceRecordId: string;
  status: "completed" | "failed" | "cancelled";
  warnings: string[];
  error?: { code: string; message: string; retryable: boolean };
}
