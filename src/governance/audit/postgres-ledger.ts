/**
 * The ledger of a multi-replica deployment: rows, authorizations and small objects in PostgreSQL
 * (see ARCHITECTURE.md, "State: who owns what"). Same semantics as `SqliteLedger`: group commit,
 * duplicates refused per row, objects all or nothing with their row, reads after queued appends.
 */
import {
  atExit,
  GovernanceError,
  migratePostgresSchema,
  type PostgresDatabase,
  type SqlValue,
  sha256Hex,
} from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import {
  type AuthorizationListOptions,
  type AuthorizationRecord,
  checkInlineObjects,
  closedLedgerError,
  duplicateError,
  type InvocationRecord,
  type Ledger,
  type LedgerActivityBucket,
  type LedgerObjects,
  type LedgerQuery,
  type LedgerSummary,
  normalizeAuthorizationRecord,
  normalizeInvocationRecord,
} from "./ledger.js";
import {
  checkActivitySpan,
  type LedgerCursor,
  normalizeActivityQuery,
  normalizeAuthorizationListing,
  normalizeLedgerQuery,
  toActivityBuckets,
  unknownCursorError,
} from "./ledger-query.js";
import {
  activityStatement,
  countStatement,
  type LedgerSqlDialect,
  type LedgerStatement,
  pageStatement,
  spanStatement,
} from "./ledger-query-sql.js";
import {
  authorizationRow,
  INSERT_AUTHORIZATIONS,
  INSERT_INVOCATIONS,
  invocationRow,
  LEDGER_MIGRATIONS,
  type Row,
  toAuthorization,
  toInvocation,
} from "./postgres-ledger-sql.js";
import { DEFAULT_MAX_INLINE_BYTES } from "./sqlite-ledger.js";

/** Queued writes past which an append commits at once instead of on the event loop's next turn. */
const MAX_QUEUED_WRITES = 256;
/** Queued inline object bytes past which the queue commits at once: bounds one statement's size. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Objects re-hashed per page by `verifyAll`, so memory stays bounded by a page. */
const VERIFY_PAGE = 64;

/**
 * How PostgreSQL spells a query's conditions. lower() under the "C" collation folds ASCII letters only,
 * as SQLite's LIKE does, whatever the database's locale (and costs half what ILIKE does).
 */
const POSTGRES_DIALECT: LedgerSqlDialect = {
  table: "sciencegate_invocations",
  bind: (params, value) => `$${params.push(value)}`,
  errorCode: "error->>'code'",
  errorMessage: "error->>'message'",
  cacheHit: (value) => value,
  contains: (column, pattern) => `lower((${column}) COLLATE "C") LIKE ${pattern} ESCAPE '\\'`,
};

/** Options of `PostgresLedger.open`. */
export interface PostgresLedgerOptions {
  /**
   * The largest object (bytes) kept inline, written in the statement of its row; larger ones belong
   * in the content store. 0 keeps none (the ledger then has no `objects`). @default 65536
   */
  maxInlineBytes?: number;
}

type Write =
  | { kind: "invocation"; record: InvocationRecord; objects: readonly ContentObject[] }
  | { kind: "authorization"; record: AuthorizationRecord };
interface PendingWrite {
  write: Write;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A `Ledger` in PostgreSQL, shared by every replica that opens the same database. Appends queued
 * before the event loop's next turn share one statement (group commit; at most 256 rows or 8 MiB of
 * inline objects wait), and batches commit one after another, so a burst of appends costs a few round
 * trips. A duplicate row
 * (invocation id, or thread and tool call) is refused alone; its objects are not stored. Reads first
 * commit what is queued, and so does a process that exits with writes unsettled (`process.exit()`):
 * a short-lived child process writes them (`PostgresDatabase.runSync`). The ledger does not own the
 * database: whoever opened it closes it.
 * @example
 * const db = await openPostgres(process.env.SCIENCEGATE_DATABASE_URL!);
 * const ledger = await PostgresLedger.open(db);
 * // … ledger.close(); then db.close()
 */
export class PostgresLedger implements Ledger {
  readonly objects: LedgerObjects | undefined;
  readonly #db: PostgresDatabase;
  readonly #maxInlineBytes: number | undefined;
  #pending: PendingWrite[] = [];
  #pendingBytes = 0;
  #scheduled = false;
  /** The last batch's commit; the next batch starts after it (append order is commit order). */
  #committing: Promise<void> = Promise.resolve();
  /** Every write not settled yet: queued, or in a statement the server has not answered. */
  readonly #unsettled = new Set<Write>();
  readonly #stopCommitAtExit: () => void;
  #closed = false;

  private constructor(db: PostgresDatabase, maxInlineBytes: number) {
    this.#db = db;
    this.#maxInlineBytes = maxInlineBytes > 0 ? maxInlineBytes : undefined;
    this.objects =
      this.#maxInlineBytes === undefined
        ? undefined
        : {
            maxInlineBytes: this.#maxInlineBytes,
            get: (sha256) => this.#getObject(sha256),
            verifyAll: () => this.#verifyObjects(),
          };
    this.#stopCommitAtExit = atExit("commit", () => this.#commitAtExit());
  }

  /**
   * Migrates the ledger's tables (once across replicas) and returns the ledger.
   * @param db the open database (see `openPostgres`)
   * @param options the inline object limit
   * @returns the ledger
   * @throws GovernanceError `INVALID_CONFIG` for a newer schema or a bad `maxInlineBytes`
   */
  static async open(db: PostgresDatabase, options: PostgresLedgerOptions = {}): Promise<PostgresLedger> {
    const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    if (!Number.isSafeInteger(maxInlineBytes) || maxInlineBytes < 0) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `PostgresLedger maxInlineBytes must be a non-negative integer (0 keeps no objects inline); got ${String(maxInlineBytes)}.`,
      );
    }
    await migratePostgresSchema(db, { store: "ledger", migrations: LEDGER_MIGRATIONS });
    return new PostgresLedger(db, maxInlineBytes);
  }

  append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void> {
    try {
      this.#ensureOpen();
      const clean = normalizeInvocationRecord(record);
      checkInlineObjects(objects, this.#maxInlineBytes);
      return this.#enqueue({ kind: "invocation", record: clean, objects: objects ?? [] });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  appendAuthorization(record: AuthorizationRecord): Promise<void> {
    try {
      this.#ensureOpen();
      return this.#enqueue({ kind: "authorization", record: normalizeAuthorizationRecord(record) });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    const [row] = await this.#read("SELECT * FROM sciencegate_invocations WHERE invocation_id = $1", [
      invocationId,
    ]);
    return row && toInvocation(row);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    const [row] = await this.#read(
      "SELECT * FROM sciencegate_invocations WHERE thread_id = $1 AND tool_call_id = $2",
      [threadId, toolCallId],
    );
    return row && toInvocation(row);
  }

  async query(query: LedgerQuery = {}): Promise<InvocationRecord[]> {
    const normalized = normalizeLedgerQuery(query);
    const cursor = normalized.after === undefined ? undefined : await this.#cursorOf(normalized.after);
    return (await this.#all(pageStatement(normalized, POSTGRES_DIALECT, cursor))).map(toInvocation);
  }

  async count(query: LedgerQuery = {}): Promise<number> {
    const [row] = await this.#all(countStatement(normalizeLedgerQuery(query), POSTGRES_DIALECT));
    return Number(row?.n ?? 0);
  }

  async activity(query: LedgerQuery & { bucketMs: number }): Promise<LedgerActivityBucket[]> {
    const normalized = normalizeActivityQuery(query);
    const [span] = await this.#all(spanStatement(POSTGRES_DIALECT));
    if (!checkActivitySpan(normalized, span)) return [];
    const rows = await this.#all(activityStatement(normalized, POSTGRES_DIALECT));
    return toActivityBuckets(rows as { bucket: string; source_id: string; status: string; n: string }[]);
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    const params = options.sessionId ? [options.sessionId] : [];
    const where = (...conditions: string[]) => {
      const all = options.sessionId ? ["session_id = $1", ...conditions] : conditions;
      return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
    };
    const [totals] = await this.#read(
      `SELECT COUNT(*)::float8 AS calls, COUNT(*) FILTER (WHERE status = 'ok')::float8 AS ok,
         COUNT(*) FILTER (WHERE status = 'error')::float8 AS errors,
         COUNT(*) FILTER (WHERE cache_hit)::float8 AS "cacheHits",
         COALESCE(SUM(queue_wait_ms), 0)::float8 AS "totalQueueWaitMs"
       FROM sciencegate_invocations ${where()}`,
      params,
    );
    const byCode = await this.#read(
      `SELECT error->>'code' AS k, COUNT(*)::float8 AS n FROM sciencegate_invocations
       ${where("status = 'error'")} GROUP BY k`,
      params,
    );
    const bySource = await this.#read(
      `SELECT source_id AS k, COUNT(*)::float8 AS n FROM sciencegate_invocations ${where()} GROUP BY k`,
      params,
    );
    const tally = (rows: Row[]) => Object.fromEntries(rows.map((r) => [String(r.k), Number(r.n)]));
    return {
      ...(totals as unknown as Omit<LedgerSummary, "byErrorCode" | "bySource">),
      byErrorCode: tally(byCode),
      bySource: tally(bySource),
    };
  }

  async getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    const [row] = await this.#read("SELECT * FROM sciencegate_authorizations WHERE id = $1", [id]);
    return row && toAuthorization(row);
  }

  async listAuthorizations(options: AuthorizationListOptions = {}): Promise<AuthorizationRecord[]> {
    const { sessionId, order, limit } = normalizeAuthorizationListing(options);
    const direction = order === "desc" ? "DESC" : "ASC";
    const [where, params] = sessionId === undefined ? ["", []] : ["WHERE session_id = $1", [sessionId]];
    const rows = await this.#read(
      `SELECT * FROM sciencegate_authorizations ${where}
       ORDER BY created_ms ${direction}, seq ${direction} LIMIT $${params.length + 1}`,
      [...params, limit ?? null],
    );
    return rows.map(toAuthorization);
  }

  /** Commits what is queued, then refuses every later call. The database stays open. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#commitPending();
    this.#closed = true;
    await this.#committing;
    this.#stopCommitAtExit();
  }

  /**
   * At process exit (no later turn will come): writes every unsettled write through `runSync`, each
   * in a savepoint of its own. A write whose statement was in flight is written again; the inserts
   * skip what is already stored.
   */
  #commitAtExit(): void {
    if (this.#unsettled.size === 0) return;
    const statements = [...this.#unsettled].map((write) =>
      write.kind === "authorization"
        ? { sql: INSERT_AUTHORIZATIONS, params: [JSON.stringify([authorizationRow(write.record, 0)])] }
        : insertInvocationsStatement([write]),
    );
    const { failed, error } = this.#db.runSync(statements);
    if (failed > 0) {
      process.stderr.write(
        `sciencegate: ${failed} audit row(s) not committed to PostgreSQL ${this.#db.label} at exit: ${error ?? "unknown error"}\n`,
      );
    }
  }

  /** Where the row `after` names sits in the ledger's order. */
  async #cursorOf(after: string): Promise<LedgerCursor> {
    const [row] = await this.#read(
      "SELECT started_ms, seq FROM sciencegate_invocations WHERE invocation_id = $1",
      [after],
    );
    if (row === undefined) throw unknownCursorError(after);
    return { startedMs: Number(row.started_ms), seq: Number(row.seq) };
  }

  async #getObject(sha256: string): Promise<Uint8Array | undefined> {
    const [row] = await this.#read("SELECT bytes FROM sciencegate_ledger_objects WHERE sha256 = $1", [
      sha256,
    ]);
    const bytes = row?.bytes as Buffer | undefined;
    return bytes === undefined ? undefined : new Uint8Array(bytes);
  }

  async #verifyObjects(): Promise<string[]> {
    const bad: string[] = [];
    let after = "";
    for (;;) {
      const rows = await this.#read(
        "SELECT sha256, bytes FROM sciencegate_ledger_objects WHERE sha256 > $1 ORDER BY sha256 LIMIT $2",
        [after, VERIFY_PAGE],
      );
      for (const { sha256, bytes } of rows as { sha256: string; bytes: Buffer }[]) {
        if (sha256Hex(bytes) !== sha256) bad.push(`sha256:${sha256}`);
        after = sha256;
      }
      if (rows.length < VERIFY_PAGE) return bad;
    }
  }

  #enqueue(write: Write): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#unsettled.add(write);
      const queued = this.#pending.push({
        write,
        resolve: () => {
          this.#unsettled.delete(write);
          resolve();
        },
        reject: (error) => {
          this.#unsettled.delete(write);
          reject(error);
        },
      });
      if (write.kind === "invocation") for (const object of write.objects) this.#pendingBytes += object.size;
      if (queued >= MAX_QUEUED_WRITES || this.#pendingBytes >= MAX_QUEUED_BYTES) this.#commitPending();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#commitPending();
        });
      }
    });
  }

  /** Hands the queue to the commit chain: it commits once the batch before it has. */
  #commitPending(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#committing = this.#committing
      .then(() => this.#commitBatch(batch))
      .catch((error: unknown) => {
        // Not expected (each write settles inside); a write still waiting must not wait forever.
        for (const item of batch) item.reject(storeError(this.#db.label, error));
      });
  }

  async #commitBatch(batch: readonly PendingWrite[]): Promise<void> {
    // An id repeated inside one batch waits for the next batch: a row's objects then follow its own row,
    // and the statement's stored ids tell each write apart.
    const seen = new Set<string>();
    const now: PendingWrite[] = [];
    const later: PendingWrite[] = [];
    for (const item of batch) {
      const { write } = item;
      const key = write.kind === "invocation" ? `i:${write.record.invocationId}` : `a:${write.record.id}`;
      if (seen.has(key)) later.push(item);
      else {
        seen.add(key);
        now.push(item);
      }
    }
    for (const kind of ["invocation", "authorization"] as const) {
      const group = now.filter((item) => item.write.kind === kind);
      if (group.length > 0) await this.#commitGroup(group);
    }
    if (later.length > 0) await this.#commitBatch(later);
  }

  /** Commits writes of one kind in one statement and settles each. */
  async #commitGroup(group: readonly PendingWrite[]): Promise<void> {
    try {
      await this.#settle(group);
    } catch (error) {
      // A value PostgreSQL refuses (e.g. a NUL character in a text) fails the whole statement: then each
      // write goes alone, so that it fails alone.
      if (group.length > 1 && isDataError(error)) for (const item of group) await this.#commitGroup([item]);
      else for (const item of group) item.reject(storeError(this.#db.label, error));
    }
  }

  /** Stores writes of one kind (one statement); settles each; throws when the statement fails. */
  async #settle(group: readonly PendingWrite[]): Promise<void> {
    const writes = group.map((item) => item.write);
    const stored = new Set(
      writes[0]?.kind === "authorization"
        ? await this.#insertAuthorizations(writes)
        : await this.#insertInvocations(writes),
    );
    for (const { write, resolve, reject } of group) {
      const key = write.kind === "invocation" ? write.record.invocationId : write.record.id;
      if (stored.has(key)) resolve();
      else reject(await this.#duplicateOf(write));
    }
  }

  /** Inserts authorization rows in one statement; returns the stored ids. */
  async #insertAuthorizations(writes: readonly Write[]): Promise<string[]> {
    const rows = writes.flatMap((write, ord) =>
      write.kind === "authorization" ? [authorizationRow(write.record, ord)] : [],
    );
    const stored = await this.#db.query<{ id: string }>(INSERT_AUTHORIZATIONS, [JSON.stringify(rows)]);
    return stored.map((row) => row.id);
  }

  /** Inserts the rows and, for the rows stored, their objects, in one statement; returns the stored ids. */
  async #insertInvocations(writes: readonly Write[]): Promise<string[]> {
    const { sql, params } = insertInvocationsStatement(writes);
    const stored = await this.#db.query<{ invocation_id: string }>(sql, params);
    return stored.map((row) => row.invocation_id);
  }

  /** The `DUPLICATE_ID` error of a refused write, naming the recorded row. */
  async #duplicateOf(write: Write): Promise<GovernanceError> {
    if (write.kind === "authorization") {
      return duplicateError(`Authorization ${write.record.id} is already recorded.`);
    }
    const { invocationId, threadId, toolCallId } = write.record;
    const [same] = await this.#db.query("SELECT 1 FROM sciencegate_invocations WHERE invocation_id = $1", [
      invocationId,
    ]);
    if (same !== undefined || threadId === undefined || toolCallId === undefined) {
      return duplicateError(`Invocation ${invocationId} is already recorded.`, invocationId);
    }
    const [call] = await this.#db.query<{ invocation_id: string }>(
      "SELECT invocation_id FROM sciencegate_invocations WHERE thread_id = $1 AND tool_call_id = $2",
      [threadId, toolCallId],
    );
    return duplicateError(
      `Tool call ${toolCallId} of thread ${threadId} is already recorded as ${call?.invocation_id}.`,
      call?.invocation_id,
    );
  }

  /** Runs a read after every queued write is committed (reads see every earlier append). */
  async #read(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    this.#ensureOpen();
    this.#commitPending();
    await this.#committing;
    return this.#db.query(sql, params);
  }

  /** The rows of a built statement, read as `#read` does. */
  #all({ sql, params }: LedgerStatement): Promise<Row[]> {
    return this.#read(sql, params);
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedLedgerError();
  }
}

/** The statement that inserts invocation rows and, for the rows stored, their objects. */
function insertInvocationsStatement(writes: readonly Write[]): { sql: string; params: SqlValue[] } {
  const rows: Row[] = [];
  const params: SqlValue[] = [];
  const objectRows: string[] = [];
  writes.forEach((write, ord) => {
    if (write.kind !== "invocation") return;
    const { record } = write;
    rows.push(invocationRow(record, ord));
    for (const object of write.objects) {
      const n = params.length + 2;
      objectRows.push(`($${n}::text, $${n + 1}::text, $${n + 2}::bytea)`);
      params.push(record.invocationId, object.sha256, toBuffer(object.bytes));
    }
  });
  const sql =
    objectRows.length === 0
      ? INSERT_INVOCATIONS
      : `WITH stored AS (${INSERT_INVOCATIONS}),
           objects AS (INSERT INTO sciencegate_ledger_objects (sha256, size, bytes)
             SELECT o.sha256, octet_length(o.bytes), o.bytes
             FROM (VALUES ${objectRows.join(", ")}) AS o(invocation_id, sha256, bytes)
             WHERE o.invocation_id IN (SELECT invocation_id FROM stored)
             ON CONFLICT (sha256) DO NOTHING)
           SELECT invocation_id FROM stored`;
  return { sql, params: [JSON.stringify(rows), ...params] };
}

/** SQLSTATE class 22 (data exception) or 54 (program limit): the statement's values, not the server. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("54"));
}

function storeError(label: string, error: unknown): GovernanceError {
  const message = error instanceof Error ? error.message : String(error);
  return isDataError(error)
    ? new GovernanceError("INVALID_INPUT", `PostgreSQL refused the ledger row: ${message}.`, { cause: error })
    : new GovernanceError("UPSTREAM_UNAVAILABLE", `The ledger in PostgreSQL ${label} failed: ${message}.`, {
        retryable: true,
        cause: error,
      });
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
