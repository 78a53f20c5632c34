/**
 * The audit ledger contract: one row per tool invocation (every outcome, cached or not) and one row
 * per permission authorization. Rows are written by the one `LedgerWriter` (`ledger-writer.ts`) into a
 * `LedgerStore`, and read through its `LedgerReader` half. Stores must pass `describeLedgerConformance`.
 */
import type { GovernanceError } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";

/** Outcome of an invocation. */
export type InvocationStatus = "ok" | "error";

/** The structured error of a failed invocation (a `GovernanceErrorBody` without `data`). */
export interface InvocationError {
  code: string;
  message: string;
  retryable: boolean;
  attempts: number;
  retryAfterMs?: number;
}

/** One ledger row: what was called, for whom, how it went and where its content lives in the CAS. */
export interface InvocationRecord {
  invocationId: string;
  sessionId: string;
  /** Who the call was made for (an access token's subject, the app's user); absent: the single user. */
  principal?: string;
  threadId?: string;
  toolCallId?: string;
  runId?: string;
  sourceId: string;
  toolId: string;
  mcpToolName?: string;
  status: InvocationStatus;
  /** ISO-8601 timestamp; rows are ordered by it. */
  startedAt: string;
  /** ISO-8601 timestamp. */
  finishedAt: string;
  durationMs: number;
  attempts: number;
  cacheHit: boolean;
  queueWaitMs: number;
  /** CAS ref (`sha256:…`) of the validated request. */
  requestRef?: string;
  /** CAS ref of the raw MCP response. */
  rawRef?: string;
  /** CAS ref of the normalized `McpToolResult`. */
  normalizedRef?: string;
  authorizationId?: string;
  license?: string;
  catalogRevision?: string;
  toolDefinitionHash?: string;
  inputHash?: string;
  /** Present exactly when `status` is `"error"`. */
  error?: InvocationError;
}

/** A single-use permission authorization (a human decision or a grant hit), kept for audit. */
export interface AuthorizationRecord {
  id: string;
  sessionId: string;
  /** Whose call or change it is (the decider's own: a card answers for its caller only); absent: the single user. */
  principal?: string;
  threadId?: string;
  toolCallId?: string;
  sourceId: string;
  toolId: string;
  /** The permission action, e.g. `search` or `download`. */
  action: string;
  /** The grant scope of the call, e.g. `pubmed:search`, `artifact:arxiv` or `filesystem:write_file:dir:/tmp/x`. */
  resource: string;
  /** What authorized (or refused) the call, e.g. `user_once`, `user_grant`, `user_always`, `existing_grant`, `always_allow`, `user_deny`. */
  decisionSource: string;
  /** ISO-8601 timestamp; listings are ordered by it. */
  createdAt: string;
  /** The session's permission epoch after this authorization. */
  epoch: number;
}

/**
 * Filters of `Ledger.query`, `count` and `activity`; all given filters must match. Empty strings count
 * as absent. Times are compared at millisecond precision.
 * @example
 * // The second page of a console's table, newest first: pass the last row of the first page.
 * const first = await ledger.query({ sourceId: "pubmed", text: "timeout", order: "desc", limit: 50 });
 * const next = await ledger.query({
 *   sourceId: "pubmed", text: "timeout", order: "desc", limit: 50, after: first.at(-1)?.invocationId,
 * });
 */
export interface LedgerQuery {
  sessionId?: string | undefined;
  /** Only rows of this principal. */
  principal?: string | undefined;
  threadId?: string | undefined;
  runId?: string | undefined;
  sourceId?: string | undefined;
  toolId?: string | undefined;
  status?: InvocationStatus | undefined;
  /** Only failed rows whose `error.code` is this. */
  errorCode?: string | undefined;
  /** Only cache hits (`true`), or only calls that were not answered from the cache (`false`). */
  cacheHit?: boolean | undefined;
  /** Only rows with `startedAt` at or after this ISO-8601 timestamp (with a zone, e.g. `Z`). */
  startedFrom?: string | undefined;
  /** Only rows with `startedAt` before this ISO-8601 timestamp (with a zone). */
  startedBefore?: string | undefined;
  /**
   * Only rows where one of `invocationId`, `sessionId`, `principal`, `threadId`, `toolCallId`, `sourceId`,
   * `toolId`, `error.code` or `error.message` contains this text. ASCII letters match in either case; other
   * characters, `%` and `_` included, match literally. At most 256 characters.
   */
  text?: string | undefined;
  /**
   * Keyset paging: an invocation id; only rows that come after that row in this query's order are
   * returned (the row itself need not match the filters). Pass the last row of a page to get the next.
   */
  after?: string | undefined;
  /** Maximum number of rows (applied after ordering, so `desc` + `limit` gives the latest). */
  limit?: number | undefined;
  /** By `startedAt`, ties in append order. @default "asc" */
  order?: "asc" | "desc" | undefined;
}

/** How many rows of one source and outcome started in one time bucket (`Ledger.activity`). */
export interface LedgerActivityBucket {
  /** ISO-8601 start of the bucket: `floor(startedMs / bucketMs) * bucketMs` since the epoch, in UTC. */
  start: string;
  sourceId: string;
  status: InvocationStatus;
  count: number;
}

/** Options of `Ledger.listAuthorizations`. Empty strings count as absent. */
export interface AuthorizationListOptions {
  /** Only this session's authorizations. */
  sessionId?: string | undefined;
  /** Only this principal's authorizations. */
  principal?: string | undefined;
  /** Maximum number of rows (applied after ordering). @default all */
  limit?: number | undefined;
  /** By `createdAt`, ties in append order. @default "asc" */
  order?: "asc" | "desc" | undefined;
}

/** Totals over the ledger or one session. */
export interface LedgerSummary {
  calls: number;
  ok: number;
  errors: number;
  cacheHits: number;
  totalQueueWaitMs: number;
  /** Failed calls per error code. */
  byErrorCode: Record<string, number>;
  /** Calls per source id. */
  bySource: Record<string, number>;
}

/**
 * Content a ledger keeps itself: the small objects of a call (request, raw and normalized result),
 * written in the same atomic step as the row that references them. Larger objects stay in the
 * `ContentStore`; `withLedgerObjects` reads both places as one store.
 */
export interface LedgerObjects {
  /** The largest object, in bytes, that `append` takes inline. */
  readonly maxInlineBytes: number;
  /**
   * The bytes stored under a SHA-256 (a fresh copy), or `undefined` when this ledger does not hold it.
   * @param sha256 64 lowercase hex digits
   */
  get(sha256: string): Promise<Uint8Array | undefined>;
  /**
   * Re-hashes every object this ledger holds.
   * @returns the refs (`sha256:…`) of objects whose bytes no longer match their address, sorted
   */
  verifyAll(): Promise<string[]>;
}

/**
 * What the console, the CLI, evidence review and replay read. Methods reject with
 * `UPSTREAM_UNAVAILABLE` after the store is closed.
 */
export interface LedgerReader {
  /** The row with this id, or `undefined`. */
  get(invocationId: string): Promise<InvocationRecord | undefined>;
  /** The row of one tool call of one thread (to replay a completed call on resume), or `undefined`. */
  findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined>;
  /**
   * Rows matching every given filter, ordered by `startedAt` (ties in append order). Paging with
   * `after` reads an index, so every page costs about the same.
   * @param query filters, order, limit and the `after` cursor
   * @throws GovernanceError `INVALID_INPUT` naming the field for a negative or fractional `limit`, an
   *   unknown `order`, a non-ISO `startedFrom`/`startedBefore`, a `cacheHit` that is not a boolean or a
   *   `text` past 256 characters; `UNKNOWN_ID` (`data.after`) when `after` names no recorded row
   */
  query(query?: LedgerQuery): Promise<InvocationRecord[]>;
  /**
   * How many rows match the filters (`limit`, `order` and `after` are ignored).
   * @param query the filters
   * @throws GovernanceError `INVALID_INPUT` as `query`
   */
  count(query?: LedgerQuery): Promise<number>;
  /**
   * Rows per time bucket, source and outcome, for a chart: sorted by `start`, then `sourceId`, then
   * `status`; empty buckets are left out. `limit`, `order` and `after` are ignored.
   * @param query the filters, and `bucketMs`: the bucket width in ms, an integer from 1,000 (a second)
   *   to 31,622,400,000 (366 days)
   * @throws GovernanceError `INVALID_INPUT` as `query`, for a bad `bucketMs`, or when the range spans
   *   more than 1,000 buckets; a missing `startedFrom` (`startedBefore`) counts as the ledger's first
   *   (last) row, so ask for a range or a wider bucket (`data.buckets`, `data.maxBuckets`)
   * @example
   * // Hourly counts of the last day.
   * const buckets = await ledger.activity({ startedFrom: dayAgo, startedBefore: now, bucketMs: 3_600_000 });
   */
  activity(query: LedgerQuery & { bucketMs: number }): Promise<LedgerActivityBucket[]>;
  /** Totals over every row, or over one session's rows. */
  summary(options?: { sessionId?: string }): Promise<LedgerSummary>;
  /** The authorization row with this id (the one an invocation's `authorizationId` names), or `undefined`. */
  getAuthorization(id: string): Promise<AuthorizationRecord | undefined>;
  /**
   * Authorizations ordered by `createdAt` (ties in append order), optionally of one session.
   * @param options the session, the order (default ascending) and the limit (default all)
   * @throws GovernanceError `INVALID_INPUT` for a negative or fractional `limit` or an unknown `order`
   */
  listAuthorizations(options?: AuthorizationListOptions): Promise<AuthorizationRecord[]>;
  /**
   * Present when the store keeps small objects with its rows (`SqliteLedger`, `PostgresLedger`;
   * `MemoryLedger` when asked). A store without it keeps none: the broker then puts every object in
   * the `ContentStore`.
   */
  readonly objects?: LedgerObjects | undefined;
}

/**
 * One write of a batch: a normalized row (see `normalizeInvocationRecord`) and the objects it references
 * that are kept with it (an authorization's are the records of an upstream server's questions).
 */
export type LedgerWrite =
  | { kind: "invocation"; record: InvocationRecord; objects: readonly ContentObject[] }
  | { kind: "authorization"; record: AuthorizationRecord; objects?: readonly ContentObject[] | undefined };

/**
 * What a batch append did with one write: stored, or refused on its own (`DUPLICATE_ID` naming the
 * recorded row in `data.existingInvocationId`, or `INVALID_INPUT` for a value the store cannot keep).
 */
export type LedgerWriteResult = { stored: true } | { refused: GovernanceError };

/** Options of `LedgerStore.appendBatch`. */
export interface LedgerBatchOptions {
  /**
   * The writes may already be stored by an earlier attempt whose outcome was lost (a dropped
   * connection, a replayed spool): a write whose own id is recorded counts as stored. @default false
   */
  again?: boolean | undefined;
}

/**
 * A storage backend of the ledger: its reads and one batch append. Only the `LedgerWriter` appends
 * (one queue, one group commit, retries and the exit step are its job); a store commits what it is
 * given. Implementations must pass `describeLedgerConformance`.
 */
export interface LedgerStore extends LedgerReader {
  /**
   * Stores a batch in one commit: each write with its objects all or nothing (an object already held
   * is kept once), a refused write alone, the others stored. Settles once the commit is durable.
   * @param writes normalized rows in append order; objects each at most `objects.maxInlineBytes`
   * @param options whether the writes may already be stored
   * @returns one result per write, in order
   * @throws GovernanceError when the commit itself failed and nothing of the batch is stored:
   *   `UPSTREAM_UNAVAILABLE` with `retryable: true` when the same batch may be committed later (a
   *   dropped connection, a busy database), else with `retryable: false` (a closed store)
   */
  appendBatch(writes: readonly LedgerWrite[], options?: LedgerBatchOptions): Promise<LedgerWriteResult[]>;
  /**
   * The same as `appendBatch` with `again`, synchronously, for a process exit step (no later turn of
   * the event loop will come). Absent when the store cannot write synchronously.
   * @param writes normalized rows
   * @throws Error when some were not stored (the message says how many and why)
   */
  appendBatchNow?(writes: readonly LedgerWrite[]): void;
  /** Releases the store (its rows stay where they are). Idempotent. */
  close(): Promise<void>;
}
