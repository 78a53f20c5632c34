/**
 * The audit ledger contract: one row per tool invocation (every outcome, cached or not) and one row
 * per permission authorization. Implementations must pass `describeLedgerConformance`.
 */
import { GovernanceError } from "../../core/index.js";
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
   * Only rows where one of `invocationId`, `sessionId`, `threadId`, `toolCallId`, `sourceId`, `toolId`,
   * `error.code` or `error.message` contains this text. ASCII letters match in either case; other
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

/** The audit ledger port. Methods reject with `UPSTREAM_UNAVAILABLE` after `close()`. */
export interface Ledger {
  /**
   * Appends one invocation row; with `objects`, also the content it references, in one atomic step
   * (all or nothing; an object already held is kept once). Appends made together may share one commit.
   * @param record the row
   * @param objects content the row references, each at most `objects.maxInlineBytes`; only for a
   *   ledger that has `objects`
   * @throws GovernanceError `DUPLICATE_ID` when the `invocationId`, or the `threadId`+`toolCallId` pair,
   * is already recorded (`data.existingInvocationId` names the row); `INVALID_INPUT` for a malformed
   * record, or objects this ledger cannot take (none at all, or one past `maxInlineBytes`)
   */
  append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void>;
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
  /**
   * Appends one authorization row.
   * @throws GovernanceError `DUPLICATE_ID` for a known `id`; `INVALID_INPUT` for a malformed record
   */
  appendAuthorization(record: AuthorizationRecord): Promise<void>;
  /** The authorization row with this id (the one an invocation's `authorizationId` names), or `undefined`. */
  getAuthorization(id: string): Promise<AuthorizationRecord | undefined>;
  /**
   * Authorizations ordered by `createdAt` (ties in append order), optionally of one session.
   * @param options the session, the order (default ascending) and the limit (default all)
   * @throws GovernanceError `INVALID_INPUT` for a negative or fractional `limit` or an unknown `order`
   */
  listAuthorizations(options?: AuthorizationListOptions): Promise<AuthorizationRecord[]>;
  /** Releases the store. Idempotent. */
  close(): Promise<void>;
  /**
   * Present when the ledger keeps small objects with its rows (`SqliteLedger`; `MemoryLedger` when asked).
   * A ledger without it stores none: the broker then puts every object in the `ContentStore`.
   */
  readonly objects?: LedgerObjects | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Checks the objects given to `append` against what the ledger can take.
 * @param objects the objects of one append
 * @param maxInlineBytes the ledger's limit, or `undefined` for a ledger without `objects`
 * @throws GovernanceError `INVALID_INPUT` naming the object and the limit
 */
export function checkInlineObjects(
  objects: readonly ContentObject[] | undefined,
  maxInlineBytes: number | undefined,
): void {
  if (objects === undefined || objects.length === 0) return;
  if (maxInlineBytes === undefined) {
    throw new GovernanceError(
      "INVALID_INPUT",
      "This ledger keeps no objects; store them in the ContentStore and append the row alone.",
    );
  }
  for (const object of objects) {
    if (!SHA256_HEX.test(object?.sha256 ?? "") || object.bytes?.byteLength !== object.size) {
      throw new GovernanceError("INVALID_INPUT", "An inline object needs its sha256 (64 hex) and its bytes.");
    }
    if (object.size > maxInlineBytes) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Object ${object.ref} has ${object.size} bytes, more than the ledger's inline limit of ${maxInlineBytes}; store it in the ContentStore first.`,
        { data: { ref: object.ref, size: object.size, maxInlineBytes } },
      );
    }
  }
}

type FieldKind = "id" | "text" | "text?" | "iso" | "count" | "ms" | "ms?" | "bool";
/** One problem of a record or query, with the path of its field. */
export interface Issue {
  path: string;
  message: string;
}

const INVOCATION_FIELDS: Record<Exclude<keyof InvocationRecord, "status" | "error">, FieldKind> = {
  invocationId: "id",
  sessionId: "id",
  threadId: "text?",
  toolCallId: "text?",
  runId: "text?",
  sourceId: "id",
  toolId: "id",
  mcpToolName: "text?",
  startedAt: "iso",
  finishedAt: "iso",
  durationMs: "ms",
  attempts: "count",
  cacheHit: "bool",
  queueWaitMs: "ms",
  requestRef: "text?",
  rawRef: "text?",
  normalizedRef: "text?",
  authorizationId: "text?",
  license: "text?",
  catalogRevision: "text?",
  toolDefinitionHash: "text?",
  inputHash: "text?",
};
const ERROR_FIELDS: Record<keyof InvocationError, FieldKind> = {
  code: "id",
  message: "text",
  retryable: "bool",
  attempts: "count",
  retryAfterMs: "ms?",
};
const AUTHORIZATION_FIELDS: Record<keyof AuthorizationRecord, FieldKind> = {
  id: "id",
  sessionId: "id",
  threadId: "text?",
  toolCallId: "text?",
  sourceId: "id",
  toolId: "id",
  action: "id",
  resource: "id",
  decisionSource: "id",
  createdAt: "iso",
  epoch: "count",
};
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
/** The rule of each field kind: its test and what the error says. Shared with `ledger-query.ts`. */
export const FIELD_RULES: Record<FieldKind, [test: (value: unknown) => boolean, message: string]> = {
  id: [(v) => typeof v === "string" && v !== "", "must be a non-empty string"],
  text: [(v) => typeof v === "string", "must be a string"],
  "text?": [(v) => typeof v === "string", "must be a string when present"],
  iso: [
    (v) => typeof v === "string" && ISO_TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)),
    "must be an ISO-8601 timestamp",
  ],
  count: [(v) => Number.isSafeInteger(v) && (v as number) >= 0, "must be a non-negative integer"],
  ms: [(v) => typeof v === "number" && Number.isFinite(v) && v >= 0, "must be a non-negative finite number"],
  "ms?": [
    (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
    "must be a non-negative finite number when present",
  ],
  bool: [(v) => typeof v === "boolean", "must be a boolean"],
};

/** A record's fields, each with its rule, listed once (a row is checked on every append). */
interface FieldRule {
  key: string;
  optional: boolean;
  test: (value: unknown) => boolean;
  message: string;
}

const rulesOf = (spec: Record<string, FieldKind>): readonly FieldRule[] =>
  Object.entries(spec).map(([key, kind]) => {
    const [test, message] = FIELD_RULES[kind];
    return { key, optional: kind.endsWith("?"), test, message };
  });

const INVOCATION_RULES = rulesOf(INVOCATION_FIELDS);
const ERROR_RULES = rulesOf(ERROR_FIELDS);
const AUTHORIZATION_RULES = rulesOf(AUTHORIZATION_FIELDS);

function pick(
  input: unknown,
  rules: readonly FieldRule[],
  issues: Issue[],
  prefix = "",
): Record<string, unknown> {
  const source = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const { key, optional, test, message } of rules) {
    const value = source[key];
    // Optional fields: undefined and "" both mean absent (the house rule for optional parameters).
    if (optional && (value === undefined || value === "")) continue;
    if (test(value)) out[key] = value;
    else issues.push({ path: prefix + key, message });
  }
  return out;
}

/**
 * The `INVALID_INPUT` error listing every issue.
 * @param what what was checked, e.g. `ledger query`
 * @param issues the problems, each with its field path
 * @returns the error, with `data.issues`
 */
export function invalid(what: string, issues: Issue[]): GovernanceError {
  const list = issues.map((issue) => `${issue.path} ${issue.message}`).join("; ");
  return new GovernanceError("INVALID_INPUT", `Invalid ${what}: ${list}.`, { data: { issues } });
}

/**
 * A clean copy of an invocation record: known fields only, empty optional strings dropped.
 * Implementations call this first so that every backend stores and returns the same shape.
 * @param record the record to check
 * @returns the normalized copy
 * @throws GovernanceError `INVALID_INPUT` listing every bad field with its path (`data.issues`)
 */
export function normalizeInvocationRecord(record: InvocationRecord): InvocationRecord {
  const issues: Issue[] = [];
  const out = pick(record, INVOCATION_RULES, issues);
  const { status, error } = record ?? {};
  if (status === "ok" || status === "error") out.status = status;
  else issues.push({ path: "status", message: 'must be "ok" or "error"' });
  if (status === "error") {
    if (typeof error === "object" && error !== null) out.error = pick(error, ERROR_RULES, issues, "error.");
    else issues.push({ path: "error", message: 'is required when status is "error"' });
  } else if (error !== undefined) {
    issues.push({ path: "error", message: 'must be absent unless status is "error"' });
  }
  if (issues.length > 0) throw invalid("invocation record", issues);
  return out as unknown as InvocationRecord;
}

/**
 * A clean copy of an authorization record (known fields only, empty optional strings dropped).
 * @param record the record to check
 * @returns the normalized copy
 * @throws GovernanceError `INVALID_INPUT` listing every bad field with its path (`data.issues`)
 */
export function normalizeAuthorizationRecord(record: AuthorizationRecord): AuthorizationRecord {
  const issues: Issue[] = [];
  const out = pick(record, AUTHORIZATION_RULES, issues);
  if (issues.length > 0) throw invalid("authorization record", issues);
  return out as unknown as AuthorizationRecord;
}

/**
 * The error of an append whose key is already recorded.
 * @param message what collided
 * @param existingInvocationId the recorded row, when the collision is on an invocation
 * @returns a `DUPLICATE_ID` error
 */
export function duplicateError(message: string, existingInvocationId?: string): GovernanceError {
  return new GovernanceError("DUPLICATE_ID", message, {
    data: existingInvocationId === undefined ? {} : { existingInvocationId },
  });
}

/**
 * The error every ledger method throws once the ledger is closed.
 * @returns an `UPSTREAM_UNAVAILABLE` error
 */
export function closedLedgerError(): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", "The ledger is closed.");
}
