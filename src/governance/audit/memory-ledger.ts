/** An in-process ledger with the semantics of the SQLite one, for tests and ephemeral sessions. */
import { GovernanceError, sha256Hex } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import {
  type AuthorizationRecord,
  checkInlineObjects,
  closedLedgerError,
  duplicateError,
  type InvocationRecord,
  type Ledger,
  type LedgerObjects,
  type LedgerQuery,
  type LedgerSummary,
  normalizeAuthorizationRecord,
  normalizeInvocationRecord,
  normalizeLedgerQuery,
} from "./ledger.js";

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
 * A `Ledger` held in memory; rows vanish with the process. Records are copied in and out, so callers
 * cannot change what was recorded.
 * @example
 * const ledger = new MemoryLedger();
 * await ledger.append(record);
 * const replay = await ledger.findByCall(threadId, toolCallId);
 */
export class MemoryLedger implements Ledger {
  #seq = 0;
  #closed = false;
  readonly #invocations: Stored<InvocationRecord>[] = [];
  readonly #byId = new Map<string, InvocationRecord>();
  readonly #byCall = new Map<string, InvocationRecord>();
  readonly #authorizations: Stored<AuthorizationRecord>[] = [];
  readonly #authorizationIds = new Set<string>();
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

  async append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void> {
    this.#ensureOpen();
    const clean = normalizeInvocationRecord(record);
    checkInlineObjects(objects, this.#maxInlineBytes);
    if (this.#byId.has(clean.invocationId)) {
      throw duplicateError(`Invocation ${clean.invocationId} is already recorded.`, clean.invocationId);
    }
    const key = callKey(clean.threadId, clean.toolCallId);
    const existing = key === undefined ? undefined : this.#byCall.get(key);
    if (existing !== undefined) {
      throw duplicateError(
        `Tool call ${clean.toolCallId} of thread ${clean.threadId} is already recorded as ${existing.invocationId}.`,
        existing.invocationId,
      );
    }
    for (const object of objects ?? []) {
      // Copied, so a caller that reuses its buffer cannot change what was recorded.
      if (!this.#objects.has(object.sha256)) this.#objects.set(object.sha256, new Uint8Array(object.bytes));
    }
    this.#invocations.push({ seq: ++this.#seq, at: Date.parse(clean.startedAt), record: clean });
    this.#byId.set(clean.invocationId, clean);
    if (key !== undefined) this.#byCall.set(key, clean);
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    this.#ensureOpen();
    return copy(this.#byId.get(invocationId));
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    this.#ensureOpen();
    const key = callKey(threadId, toolCallId);
    return key === undefined ? undefined : copy(this.#byCall.get(key));
  }

  async query(query: LedgerQuery = {}): Promise<InvocationRecord[]> {
    this.#ensureOpen();
    const { filters, order, limit } = normalizeLedgerQuery(query);
    const wanted = Object.entries(filters) as [keyof InvocationRecord, string][];
    const rows = sortRows(this.#invocations, order)
      .map((row) => row.record)
      .filter((record) => wanted.every(([key, value]) => record[key] === value));
    return (limit === undefined ? rows : rows.slice(0, limit)).map((record) => structuredClone(record));
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

  async appendAuthorization(record: AuthorizationRecord): Promise<void> {
    this.#ensureOpen();
    const clean = normalizeAuthorizationRecord(record);
    if (this.#authorizationIds.has(clean.id))
      throw duplicateError(`Authorization ${clean.id} is already recorded.`);
    this.#authorizationIds.add(clean.id);
    this.#authorizations.push({ seq: ++this.#seq, at: Date.parse(clean.createdAt), record: clean });
  }

  async listAuthorizations(options: { sessionId?: string } = {}): Promise<AuthorizationRecord[]> {
    this.#ensureOpen();
    return sortRows(this.#authorizations, "asc")
      .map((row) => row.record)
      .filter((record) => !options.sessionId || record.sessionId === options.sessionId)
      .map((record) => structuredClone(record));
  }

  async close(): Promise<void> {
    this.#closed = true;
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

function sortRows<T>(rows: readonly Stored<T>[], order: "asc" | "desc"): Stored<T>[] {
  const direction = order === "asc" ? 1 : -1;
  return [...rows].sort((a, b) => direction * (a.at - b.at || a.seq - b.seq));
}
