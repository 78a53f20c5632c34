/**
 * A ledger query, read the same way by every backend: its checks, the row it matches in memory, the
 * keyset cursor of `after` and the buckets of `activity` (the SQL ledgers' statements are in
 * `ledger-query-sql.ts`).
 */
import { GovernanceError } from "../../core/index.js";
import type {
  AuthorizationListOptions,
  InvocationRecord,
  InvocationStatus,
  LedgerActivityBucket,
  LedgerQuery,
} from "./ledger.js";
import { FIELD_RULES, type Issue, invalid } from "./ledger-record.js";

/** The filters compared for equality with a column of the same name. */
const EQUAL_KEYS = ["sessionId", "principal", "threadId", "runId", "sourceId", "toolId", "status"] as const;
type EqualKey = (typeof EQUAL_KEYS)[number];

/** The longest `text` a query may search for: a search box, not a document. */
export const MAX_QUERY_TEXT_LENGTH = 256;
/** The most time buckets one `activity` call may span. */
export const MAX_ACTIVITY_BUCKETS = 1000;
const MIN_BUCKET_MS = 1000;
const MAX_BUCKET_MS = 366 * 24 * 3600 * 1000;

/** A query checked once: present filters only, times in epoch ms. */
export interface NormalizedLedgerQuery {
  equal: Partial<Record<EqualKey, string>>;
  errorCode: string | undefined;
  cacheHit: boolean | undefined;
  startedFromMs: number | undefined;
  startedBeforeMs: number | undefined;
  /** The search text, ASCII letters lowered. */
  text: string | undefined;
  after: string | undefined;
  order: "asc" | "desc";
  limit: number | undefined;
}

/** Where a row sits in the ledger's order: its start and its append sequence. */
export interface LedgerCursor {
  startedMs: number;
  seq: number;
}

const present = (value: unknown) => value !== undefined && value !== "";

function orderOf(value: unknown, issues: Issue[]): "asc" | "desc" {
  if (value === undefined || value === "asc" || value === "desc") return value ?? "asc";
  issues.push({ path: "order", message: 'must be "asc" or "desc"' });
  return "asc";
}

function limitOf(value: unknown, issues: Issue[]): number | undefined {
  if (value === undefined || FIELD_RULES.count[0](value)) return value as number | undefined;
  issues.push({ path: "limit", message: FIELD_RULES.count[1] });
  return undefined;
}

function stringOf(query: LedgerQuery, key: keyof LedgerQuery, issues: Issue[]): string | undefined {
  const value = query[key];
  if (!present(value)) return undefined;
  if (typeof value === "string") return value;
  issues.push({ path: key, message: "must be a string" });
  return undefined;
}

function timeOf(
  query: LedgerQuery,
  key: "startedFrom" | "startedBefore",
  issues: Issue[],
): number | undefined {
  const value = query[key];
  if (!present(value)) return undefined;
  if (FIELD_RULES.iso[0](value)) return Date.parse(value as string);
  issues.push({ path: key, message: `${FIELD_RULES.iso[1]} with a zone, e.g. 2025-01-01T00:00:00Z` });
  return undefined;
}

/**
 * A query's filters with empty strings removed, its order, limit and cursor, checked.
 * @param query the caller's query
 * @returns the normalized query
 * @throws GovernanceError `INVALID_INPUT` listing every bad field (`data.issues`)
 */
export function normalizeLedgerQuery(query: LedgerQuery = {}): NormalizedLedgerQuery {
  const issues: Issue[] = [];
  const equal: Partial<Record<EqualKey, string>> = {};
  for (const key of EQUAL_KEYS) {
    const value = stringOf(query, key, issues);
    if (value !== undefined) equal[key] = value;
  }
  const text = stringOf(query, "text", issues);
  if (text !== undefined && text.length > MAX_QUERY_TEXT_LENGTH) {
    issues.push({ path: "text", message: `must be at most ${MAX_QUERY_TEXT_LENGTH} characters` });
  }
  const { cacheHit } = query;
  if (cacheHit !== undefined && typeof cacheHit !== "boolean") {
    issues.push({ path: "cacheHit", message: FIELD_RULES.bool[1] });
  }
  const normalized: NormalizedLedgerQuery = {
    equal,
    errorCode: stringOf(query, "errorCode", issues),
    cacheHit: typeof cacheHit === "boolean" ? cacheHit : undefined,
    startedFromMs: timeOf(query, "startedFrom", issues),
    startedBeforeMs: timeOf(query, "startedBefore", issues),
    text: text === undefined ? undefined : lowerAscii(text),
    after: stringOf(query, "after", issues),
    order: orderOf(query.order, issues),
    limit: limitOf(query.limit, issues),
  };
  if (issues.length > 0) throw invalid("ledger query", issues);
  return normalized;
}

/**
 * An `activity` query checked: the filters and the bucket width.
 * @param query the caller's query with `bucketMs`
 * @returns the normalized query and `bucketMs`
 * @throws GovernanceError `INVALID_INPUT` for a bad filter or `bucketMs`, or a range given by both
 *   bounds that spans more than `MAX_ACTIVITY_BUCKETS` buckets
 */
export function normalizeActivityQuery(
  query: LedgerQuery & { bucketMs: number },
): NormalizedLedgerQuery & { bucketMs: number } {
  const normalized = normalizeLedgerQuery(query);
  const bucketMs = query?.bucketMs;
  if (!Number.isSafeInteger(bucketMs) || bucketMs < MIN_BUCKET_MS || bucketMs > MAX_BUCKET_MS) {
    throw invalid("activity query", [
      {
        path: "bucketMs",
        message: `must be an integer from ${MIN_BUCKET_MS} (a second) to ${MAX_BUCKET_MS} (366 days)`,
      },
    ]);
  }
  const withBucket = { ...normalized, bucketMs };
  const { startedFromMs, startedBeforeMs } = normalized;
  if (startedFromMs !== undefined && startedBeforeMs !== undefined) {
    checkActivitySpan(withBucket, { firstMs: startedFromMs, lastMs: startedBeforeMs - 1 });
  }
  return withBucket;
}

/**
 * The start of the bucket a time falls in (the floor, also before 1970).
 * @param ms epoch ms
 * @param bucketMs the bucket width
 * @returns the bucket's start in epoch ms
 */
export function bucketStart(ms: number, bucketMs: number): number {
  return ms - (((ms % bucketMs) + bucketMs) % bucketMs);
}

/**
 * Refuses an `activity` range of too many buckets. A missing bound is the ledger's first (last) row.
 * @param query the normalized activity query
 * @param rows the starts of the ledger's first and last rows in epoch ms (as a database returns them:
 *   `null` or absent when it has none, maybe a string for a BIGINT)
 * @returns whether any bucket can hold a row (`false`: the answer is empty)
 * @throws GovernanceError `INVALID_INPUT` (`data.buckets`, `data.maxBuckets`) past `MAX_ACTIVITY_BUCKETS`
 */
export function checkActivitySpan(
  query: NormalizedLedgerQuery & { bucketMs: number },
  rows: { firstMs?: unknown; lastMs?: unknown } | undefined,
): boolean {
  const held = (value: unknown) => (value === null || value === undefined ? undefined : Number(value));
  const firstMs = query.startedFromMs ?? held(rows?.firstMs);
  const lastMs = query.startedBeforeMs === undefined ? held(rows?.lastMs) : query.startedBeforeMs - 1;
  if (firstMs === undefined || lastMs === undefined || lastMs < firstMs) return false;
  const { bucketMs } = query;
  const buckets = (bucketStart(lastMs, bucketMs) - bucketStart(firstMs, bucketMs)) / bucketMs + 1;
  if (buckets <= MAX_ACTIVITY_BUCKETS) return true;
  throw new GovernanceError(
    "INVALID_INPUT",
    `The activity range spans ${buckets} buckets of ${bucketMs} ms, more than ${MAX_ACTIVITY_BUCKETS}; narrow startedFrom/startedBefore (a missing bound counts as the ledger's first or last row) or widen bucketMs.`,
    {
      data: {
        issues: [{ path: "bucketMs", message: `spans more than ${MAX_ACTIVITY_BUCKETS} buckets` }],
        buckets,
        maxBuckets: MAX_ACTIVITY_BUCKETS,
      },
    },
  );
}

/**
 * Grouped counts as the ledgers return them, sorted by start, then source, then status.
 * @param rows one per bucket, source and status (numbers may come as strings from PostgreSQL)
 * @returns the buckets
 */
export function toActivityBuckets(
  rows: Iterable<{ bucket: number | string; source_id: string; status: string; n: number | string }>,
): LedgerActivityBucket[] {
  const sorted = [...rows]
    .map((row) => ({ ms: Number(row.bucket), sourceId: row.source_id, status: row.status, n: Number(row.n) }))
    .sort((a, b) => a.ms - b.ms || compare(a.sourceId, b.sourceId) || compare(a.status, b.status));
  return sorted.map(({ ms, sourceId, status, n }) => ({
    start: new Date(ms).toISOString(),
    sourceId,
    status: status as InvocationStatus,
    count: n,
  }));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An authorization listing's options checked.
 * @param options the caller's options
 * @returns the session and principal (`undefined` for all), the order and the limit
 * @throws GovernanceError `INVALID_INPUT` for a negative or fractional `limit` or an unknown `order`
 */
export function normalizeAuthorizationListing(options: AuthorizationListOptions = {}): {
  sessionId: string | undefined;
  principal: string | undefined;
  order: "asc" | "desc";
  limit: number | undefined;
} {
  const issues: Issue[] = [];
  const order = orderOf(options.order, issues);
  const limit = limitOf(options.limit, issues);
  if (issues.length > 0) throw invalid("authorization listing", issues);
  return {
    sessionId: options.sessionId || undefined,
    principal: options.principal || undefined,
    order,
    limit,
  };
}

/** The error of an `after` that names no row. */
export function unknownCursorError(after: string): GovernanceError {
  return new GovernanceError(
    "UNKNOWN_ID",
    `The query's after names no recorded invocation (${after}); pass the invocationId of a row a previous page returned.`,
    { data: { after } },
  );
}

/** Lowers ASCII letters only, so every backend folds case alike (SQLite's LIKE does no more). */
export function lowerAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * Whether a row matches every filter of a query (the in-memory ledger's WHERE clause).
 * @param record the row
 * @param query the normalized query
 */
export function matchesLedgerQuery(record: InvocationRecord, query: NormalizedLedgerQuery): boolean {
  for (const [key, value] of Object.entries(query.equal)) {
    if (record[key as EqualKey] !== value) return false;
  }
  if (query.errorCode !== undefined && record.error?.code !== query.errorCode) return false;
  if (query.cacheHit !== undefined && record.cacheHit !== query.cacheHit) return false;
  const startedMs = Date.parse(record.startedAt);
  if (query.startedFromMs !== undefined && startedMs < query.startedFromMs) return false;
  if (query.startedBeforeMs !== undefined && startedMs >= query.startedBeforeMs) return false;
  const { text } = query;
  if (text === undefined) return true;
  const { invocationId, sessionId, principal, threadId, toolCallId, sourceId, toolId, error } = record;
  const fields = [invocationId, sessionId, principal, threadId, toolCallId, sourceId, toolId];
  return [...fields, error?.code, error?.message].some(
    (field) => field !== undefined && lowerAscii(field).includes(text),
  );
}
