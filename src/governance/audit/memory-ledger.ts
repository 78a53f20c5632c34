/** An in-process ledger store with the semantics of the SQLite one, for tests and ephemeral sessions. */
import { GovernanceError, sha256Hex } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import type {
  AuthorizationListOptions,
  AuthorizationRecord,
  InvocationRecord,
  LedgerActivityBucket,
  LedgerBatchOptions,
  LedgerObjects,
  LedgerQuery,
  LedgerStore,
  LedgerSummary,
  LedgerWrite,
  LedgerWriteResult,
} from "./ledger.js";
import {
  bucketStart,
  checkActivitySpan,
  matchesLedgerQuery,
  type NormalizedLedgerQuery,
  normalizeActivityQuery,
  normalizeAuthorizationListing,
  normalizeLedgerQuery,
  toActivityBuckets,
  unknownCursorError,
} from "./ledger-query.js";
import { closedLedgerError, duplicateError } from "./ledger-record.js";

interface Stored<T> {
  seq: number;
  at: number;
  record: T;
}

/** Options of `MemoryLedger`. */
export interface MemoryLedgerOptions {
  /**
   * Keep objects up to this many bytes with their rows (`objects`), as `SqliteLedger` does; without
   * it the ledger keeps none and the broker puts every object in the `ContentStore`. @default none
   */
  maxInlineBytes?: number | undefined;
}

/**
 * A `LedgerStore` held in memory; rows vanish with the process. Records are copied in and out, so
 * callers cannot change what was recorded. Rows are kept in the ledger's order, so a page scans only
 * as far as it needs; counts and filters scan every row.
 * @example
 * const store = new MemoryLedger();
 * const ledger = new LedgerWriter(store);
 * await ledger.append(record);
 * const replay = await store.findByCall(threadId, toolCallId);
 */
export class MemoryLedger implements LedgerStore {
  #seq = 0;
  #closed = false;
  /** In the ledger's order: by start, ties in append order. */
  readonly #invocations: Stored<InvocationRecord>[] = [];
  readonly #byId = new Map<string, Stored<InvocationRecord>>();
  readonly #byCall = new Map<string, InvocationRecord>();
  /** In listing order: by creation, ties in append order. */
  readonly #authorizations: Stored<AuthorizationRecord>[] = [];
  readonly #authorizationsById = new Map<string, AuthorizationRecord>();
  readonly #objects = new Map<string, Uint8Array>();
  readonly #maxInlineBytes: number | undefined;
  readonly objects: LedgerObjects | undefined;

  /**
   * @param options whether to keep small objects with the rows
   * @throws GovernanceError `INVALID_CONFIG` for a `maxInlineBytes` that is not a positive integer
   */
  constructor(options: MemoryLedgerOptions = {}) {
    const max = options.maxInlineBytes;
    if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `MemoryLedger maxInlineBytes must be a positive integer; got ${String(max)}.`,
      );
    }
    this.#maxInlineBytes = max;
    this.objects =
      max === undefined
        ? undefined
        : {
            maxInlineBytes: max,
            get: async (sha256) => {
              this.#ensureOpen();
              const bytes = this.#objects.get(sha256);
              return bytes === undefined ? undefined : new Uint8Array(bytes);
            },
            verifyAll: async () => {
              this.#ensureOpen();
              return [...this.#objects]
                .filter(([sha256, bytes]) => sha256Hex(bytes) !== sha256)
                .map(([sha256]) => `sha256:${sha256}`)
                .sort();
            },
          };
  }

  async appendBatch(
    writes: readonly LedgerWrite[],
    options: LedgerBatchOptions = {},
  ): Promise<LedgerWriteResult[]> {
    this.#ensureOpen();
    return writes.map((write) => this.#apply(write, options.again === true));
  }

  appendBatchNow(writes: readonly LedgerWrite[]): void {
    const refused = writes.map((write) => this.#apply(write, true)).filter((result) => "refused" in result);
    if (refused.length > 0) throw new Error(`${refused.length} write(s) refused.`);
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    this.#ensureOpen();
    return copy(this.#byId.get(invocationId)?.record);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    this.#ensureOpen();
    const key = callKey(threadId, toolCallId);
    return key === undefined ? undefined : copy(this.#byCall.get(key));
  }

  async query(query: LedgerQuery = {}): Promise<InvocationRecord[]> {
    this.#ensureOpen();
    const normalized = normalizeLedgerQuery(query);
    const { order, limit, after } = normalized;
    const rows = this.#invocations;
    let from = order === "asc" ? 0 : rows.length - 1;
    if (after !== undefined) {
      const cursor = this.#byId.get(after);
      if (cursor === undefined) throw unknownCursorError(after);
      const index = indexOf(rows, cursor);
      from = order === "asc" ? index + 1 : index - 1;
    }
    const step = order === "asc" ? 1 : -1;
    const out: InvocationRecord[] = [];
    for (let i = from; i >= 0 && i < rows.length && out.length !== limit; i += step) {
      const { record } = rows[i] as Stored<InvocationRecord>;
      if (matchesLedgerQuery(record, normalized)) out.push(structuredClone(record));
    }
    return out;
  }

  async count(query: LedgerQuery = {}): Promise<number> {
    this.#ensureOpen();
    return this.#matching(normalizeLedgerQuery(query)).length;
  }

  async activity(query: LedgerQuery & { bucketMs: number }): Promise<LedgerActivityBucket[]> {
    this.#ensureOpen();
    const normalized = normalizeActivityQuery(query);
    const rows = this.#invocations;
    if (!checkActivitySpan(normalized, { firstMs: rows[0]?.at, lastMs: rows.at(-1)?.at })) return [];
    const counts = new Map<string, { bucket: number; source_id: string; status: string; n: number }>();
    for (const { at, record } of this.#matching(normalized)) {
      const bucket = bucketStart(at, normalized.bucketMs);
      const key = JSON.stringify([bucket, record.sourceId, record.status]);
      const entry = counts.get(key) ?? { bucket, source_id: record.sourceId, status: record.status, n: 0 };
      entry.n += 1;
      counts.set(key, entry);
    }
    return toActivityBuckets(counts.values());
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    this.#ensureOpen();
    const summary: LedgerSummary = {
      calls: 0,
      ok: 0,
      errors: 0,
      cacheHits: 0,
      totalQueueWaitMs: 0,
      byErrorCode: {},
      bySource: {},
    };
    for (const { record } of this.#invocations) {
      if (options.sessionId && record.sessionId !== options.sessionId) continue;
      summary.calls += 1;
      if (record.status === "ok") summary.ok += 1;
      else summary.errors += 1;
      if (record.cacheHit) summary.cacheHits += 1;
      summary.totalQueueWaitMs += record.queueWaitMs;
      if (record.error)
        summary.byErrorCode[record.error.code] = (summary.byErrorCode[record.error.code] ?? 0) + 1;
      summary.bySource[record.sourceId] = (summary.bySource[record.sourceId] ?? 0) + 1;
    }
    return summary;
  }

  async getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    this.#ensureOpen();
    return copy(this.#authorizationsById.get(id));
  }

  async listAuthorizations(options: AuthorizationListOptions = {}): Promise<AuthorizationRecord[]> {
    this.#ensureOpen();
    const { sessionId, principal, order, limit } = normalizeAuthorizationListing(options);
    const rows = this.#authorizations
      .map((row) => row.record)
      .filter(
        (record) =>
          (sessionId === undefined || record.sessionId === sessionId) &&
          (principal === undefined || record.principal === principal),
      );
    if (order === "desc") rows.reverse();
    return rows.slice(0, limit).map((record) => structuredClone(record));
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Keeps a row's objects, or says why the row is refused. */
  #keepObjects(objects: readonly ContentObject[]): GovernanceError | undefined {
    if (objects.length > 0 && this.#maxInlineBytes === undefined) {
      return new GovernanceError("INVALID_INPUT", "This ledger keeps no objects.");
    }
    for (const object of objects) {
      // Copied, so a caller that reuses its buffer cannot change what was recorded.
      if (!this.#objects.has(object.sha256)) this.#objects.set(object.sha256, new Uint8Array(object.bytes));
    }
    return undefined;
  }

  #apply(write: LedgerWrite, again: boolean): LedgerWriteResult {
    if (write.kind === "authorization") {
      const { record } = write;
      if (this.#authorizationsById.has(record.id)) {
        return again
          ? { stored: true }
          : { refused: duplicateError(`Authorization ${record.id} is already recorded.`) };
      }
      const refused = this.#keepObjects(write.objects ?? []);
      if (refused !== undefined) return { refused };
      const clean = structuredClone(record);
      this.#authorizationsById.set(clean.id, clean);
      insertInOrder(this.#authorizations, {
        seq: ++this.#seq,
        at: Date.parse(clean.createdAt),
        record: clean,
      });
      return { stored: true };
    }
    const clean = structuredClone(write.record);
    if (this.#byId.has(clean.invocationId)) {
      if (again) return { stored: true };
      return {
        refused: duplicateError(`Invocation ${clean.invocationId} is already recorded.`, clean.invocationId),
      };
    }
    const key = callKey(clean.threadId, clean.toolCallId);
    const existing = key === undefined ? undefined : this.#byCall.get(key);
    if (existing !== undefined) {
      return {
        refused: duplicateError(
          `Tool call ${clean.toolCallId} of thread ${clean.threadId} is already recorded as ${existing.invocationId}.`,
          existing.invocationId,
        ),
      };
    }
    const refused = this.#keepObjects(write.objects);
    if (refused !== undefined) return { refused };
    const stored = { seq: ++this.#seq, at: Date.parse(clean.startedAt), record: clean };
    insertInOrder(this.#invocations, stored);
    this.#byId.set(clean.invocationId, stored);
    if (key !== undefined) this.#byCall.set(key, clean);
    return { stored: true };
  }

  /** Every row matching the query's filters, in ascending order. */
  #matching(query: NormalizedLedgerQuery): Stored<InvocationRecord>[] {
    return this.#invocations.filter(({ record }) => matchesLedgerQuery(record, query));
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedLedgerError();
  }
}

function callKey(threadId: string | undefined, toolCallId: string | undefined): string | undefined {
  // JSON keeps the pair unambiguous even when an id contains the separator.
  return threadId && toolCallId ? JSON.stringify([threadId, toolCallId]) : undefined;
}

function copy<T>(record: T | undefined): T | undefined {
  return record === undefined ? undefined : structuredClone(record);
}

const before = <T>(a: Stored<T>, b: Stored<T>) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** The index of the first row not before `row` (binary search over rows in order). */
function indexOf<T>(rows: readonly Stored<T>[], row: Stored<T>): number {
  let [low, high] = [0, rows.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(rows[middle] as Stored<T>, row)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Inserts a row in order; rows usually arrive in order, so this is a push. */
function insertInOrder<T>(rows: Stored<T>[], row: Stored<T>): void {
  const last = rows.at(-1);
  if (last === undefined || before(last, row)) rows.push(row);
  else rows.splice(indexOf(rows, row), 0, row);
}
