/**
 * The embedded ledger: SQLite through better-sqlite3 in WAL mode. Only `open()` loads better-sqlite3
 * (through `openSqlite`), so importing Sciencegate does not pay for the native addon.
 */
import type BetterSqlite3 from "better-sqlite3";
import { atExit, GovernanceError, migrateSchema, openSqlite, sha256Hex } from "../../core/index.js";
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
  createLedgerWriter,
  LedgerCheckpointer,
  type LedgerWrite,
  type LedgerWriteResult,
  type LedgerWriter,
} from "./ledger-checkpointer.js";
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
  column,
  countStatement,
  type LedgerSqlDialect,
  type LedgerStatement,
  pageStatement,
  spanStatement,
} from "./ledger-query-sql.js";

type Database = BetterSqlite3.Database;
type Row = Record<string, unknown>;
/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE invocations (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     invocation_id TEXT NOT NULL UNIQUE,
     session_id TEXT NOT NULL, thread_id TEXT, tool_call_id TEXT, run_id TEXT,
     source_id TEXT NOT NULL, tool_id TEXT NOT NULL, mcp_tool_name TEXT,
     status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
     started_at TEXT NOT NULL, started_ms INTEGER NOT NULL, finished_at TEXT NOT NULL,
     duration_ms REAL NOT NULL, attempts INTEGER NOT NULL, cache_hit INTEGER NOT NULL, queue_wait_ms REAL NOT NULL,
     request_ref TEXT, raw_ref TEXT, normalized_ref TEXT, authorization_id TEXT, license TEXT,
     catalog_revision TEXT, tool_definition_hash TEXT, input_hash TEXT,
     error TEXT CHECK (error IS NULL OR json_valid(error)));
   CREATE UNIQUE INDEX invocations_call ON invocations (thread_id, tool_call_id)
     WHERE thread_id IS NOT NULL AND tool_call_id IS NOT NULL;
   CREATE INDEX invocations_session ON invocations (session_id, started_ms);
   CREATE INDEX invocations_thread ON invocations (thread_id, started_ms);
   CREATE INDEX invocations_tool ON invocations (source_id, tool_id, started_ms);
   CREATE TABLE authorizations (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, thread_id TEXT, tool_call_id TEXT,
     source_id TEXT NOT NULL, tool_id TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL,
     decision_source TEXT NOT NULL, created_at TEXT NOT NULL, created_ms INTEGER NOT NULL, epoch INTEGER NOT NULL);
   CREATE INDEX authorizations_session ON authorizations (session_id, created_ms);`,
  `CREATE TABLE objects (
     seq INTEGER PRIMARY KEY,
     sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
     size INTEGER NOT NULL, bytes BLOB NOT NULL CHECK (length(bytes) = size));`,
  // Browsing: pages in the ledger's order (started_ms, seq), alone or by source, and counts by source
  // and outcome from the index alone (activity scans the first one, not the table); authorizations
  // newest first (an index ends in the rowid, seq); rows of one tool whatever the source (extractions).
  `CREATE INDEX invocations_started ON invocations (started_ms, seq, source_id, status);
   CREATE INDEX invocations_source ON invocations (source_id, started_ms, seq, status);
   CREATE INDEX invocations_tool_only ON invocations (tool_id, started_ms, seq);
   CREATE INDEX authorizations_created ON authorizations (created_ms);`,
];

/** Invocation fields stored in a column of the same name in snake_case (cacheHit and error are converted). */
const INVOCATION_FIELDS = `invocationId sessionId threadId toolCallId runId sourceId toolId mcpToolName status
  startedAt finishedAt durationMs attempts queueWaitMs requestRef rawRef normalizedRef authorizationId license
  catalogRevision toolDefinitionHash inputHash`.split(/\s+/) as (keyof InvocationRecord)[];
const AUTHORIZATION_FIELDS = `id sessionId threadId toolCallId sourceId toolId action resource decisionSource
  createdAt epoch`.split(/\s+/) as (keyof AuthorizationRecord)[];

/** Fixed column lists, so each insert is one statement prepared once and bound by position. */
const INVOCATION_COLUMNS = [...INVOCATION_FIELDS.map(column), "cache_hit", "started_ms", "error"];
const AUTHORIZATION_COLUMNS = [...AUTHORIZATION_FIELDS.map(column), "created_ms"];
const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;

/** How SQLite spells a query's conditions (LIKE folds ASCII letters only, as the port says). */
const SQLITE_DIALECT: LedgerSqlDialect = {
  table: "invocations",
  bind: (params, value) => {
    params.push(value);
    return "?";
  },
  errorCode: "json_extract(error, '$.code')",
  errorMessage: "json_extract(error, '$.message')",
  cacheHit: (value) => (value ? 1 : 0),
  contains: (column, pattern) => `${column} LIKE ${pattern} ESCAPE '\\'`,
};

/** The statements of the writer (`ledger-writer.cjs`), prepared on its connection. */
const LEDGER_WRITE_SQL: Record<string, string> = {
  invocationExists: "SELECT 1 FROM invocations WHERE invocation_id = ?",
  callRow: "SELECT invocation_id FROM invocations WHERE thread_id = ? AND tool_call_id = ?",
  insertObject: "INSERT OR IGNORE INTO objects (sha256, size, bytes) VALUES (?, ?, ?)",
  insertInvocation: insertSql("invocations", INVOCATION_COLUMNS),
  authorizationExists: "SELECT 1 FROM authorizations WHERE id = ?",
  insertAuthorization: insertSql("authorizations", AUTHORIZATION_COLUMNS),
};

/**
 * The largest object kept inline in the ledger by default: 64 KiB. Measured on a 2-core host (WAL,
 * `synchronous=NORMAL`, `bench/lib/object-write-cost.ts`), a blob insert costs less than a file create
 * + rename up to ~128 KiB (at 64 KiB: 0.2-0.3 ms against 0.4-0.6 ms; at 256 KiB: 1.1 ms against
 * 0.6-0.9 ms) and blocks the event loop longer as it grows, so 64 KiB keeps a margin below the crossing.
 */
export const DEFAULT_MAX_INLINE_BYTES = 64 * 1024;

/**
 * Queued writes past which an append commits the queue at once instead of on the event loop's next
 * turn: callers that never yield to it (a loop of cache hits) still commit in bounded groups.
 */
const MAX_QUEUED_WRITES = 256;

/** Options of `SqliteLedger.open`. */
export interface SqliteLedgerOptions {
  /**
   * The largest object (bytes) kept inline, in the transaction of its row; larger ones belong in the
   * file CAS. 0 keeps none (the ledger then has no `objects`). @default 65536
   */
  maxInlineBytes?: number;
  /**
   * Run WAL checkpoints in a thread of the ledger's own, off the event loop; without it (and for
   * `:memory:`) SQLite checkpoints inside whichever commit crosses its threshold. @default true
   */
  checkpointThread?: boolean;
}

/** One queued write of a group commit. */
interface PendingWrite {
  op: LedgerWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A `Ledger` in one SQLite file (`journal_mode=WAL`, `synchronous=NORMAL`, `busy_timeout=5000`), safe to
 * open from several processes at once. Small objects of a row live in its `objects` table, written in
 * the row's transaction. Appends queued before the event loop's next turn share one transaction (group
 * commit; at most 256 wait, past which the queue goes at once); each append keeps its own savepoint, so
 * one refused row does not undo the others, and its promise settles once that transaction has
 * committed. Reads first commit what is queued, and so does a process that exits normally. WAL
 * checkpoints run in a thread of the ledger's own (`LedgerCheckpointer`), not inside a commit.
 * @example
 * const ledger = await SqliteLedger.open(join(resolveDataDir(), "ledger.sqlite"));
 */
export class SqliteLedger implements Ledger {
  /** Absolute path of the database file, or `:memory:`. */
  readonly path: string;
  readonly objects: LedgerObjects | undefined;
  readonly #db: Database;
  readonly #maxInlineBytes: number | undefined;
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  #pending: PendingWrite[] = [];
  #scheduled = false;
  #closed = false;
  readonly #writer: LedgerWriter;
  readonly #checkpointer: LedgerCheckpointer | undefined;
  /** Stops committing the queue at process exit (see `atExit`). */
  readonly #stopCommitAtExit: () => void;

  private constructor(db: Database, path: string, maxInlineBytes: number, checkpointThread: boolean) {
    this.#db = db;
    this.#writer = createLedgerWriter(db, LEDGER_WRITE_SQL);
    this.#checkpointer =
      checkpointThread && path !== ":memory:"
        ? startCheckpointer(db, path, () => this.#commitPending())
        : undefined;
    this.#stopCommitAtExit = atExit("commit", () => this.#commitPending());
    this.path = path;
    this.#maxInlineBytes = maxInlineBytes > 0 ? maxInlineBytes : undefined;
    this.objects =
      this.#maxInlineBytes === undefined
        ? undefined
        : {
            maxInlineBytes: this.#maxInlineBytes,
            get: async (sha256) => this.#getObject(sha256),
            verifyAll: async () => this.#verifyObjects(),
          };
  }

  /**
   * Opens (creating the file and its parent directories if needed) and migrates a ledger.
   * @param path a file path, or `":memory:"` for a private in-memory database
   * @param options the inline object limit
   * @returns the open ledger
   * @throws GovernanceError `INVALID_CONFIG` when the file was written by a newer schema version, or
   *   for a `maxInlineBytes` that is not a non-negative integer
   */
  static async open(path: string, options: SqliteLedgerOptions = {}): Promise<SqliteLedger> {
    const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    if (!Number.isSafeInteger(maxInlineBytes) || maxInlineBytes < 0) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `SqliteLedger maxInlineBytes must be a non-negative integer (0 keeps no objects inline); got ${String(maxInlineBytes)}.`,
      );
    }
    const opened = await openSqlite(path, migrate);
    return new SqliteLedger(opened.db, opened.path, maxInlineBytes, options.checkpointThread ?? true);
  }

  /** Whether checkpoints run in the ledger's thread, and how many it has run. For tests and diagnostics. */
  get checkpoints(): { thread: boolean; count: number } {
    return { thread: this.#checkpointer?.active ?? false, count: this.#checkpointer?.checkpoints ?? 0 };
  }

  append(record: InvocationRecord, objects?: readonly ContentObject[]): Promise<void> {
    let clean: InvocationRecord;
    let values: unknown[];
    try {
      this.#ensureOpen();
      clean = normalizeInvocationRecord(record);
      checkInlineObjects(objects, this.#maxInlineBytes);
      values = INVOCATION_FIELDS.map((field) => clean[field] ?? null);
      values.push(clean.cacheHit ? 1 : 0, Date.parse(clean.startedAt));
      values.push(clean.error === undefined ? null : JSON.stringify(clean.error));
    } catch (error) {
      return Promise.reject(error);
    }
    // The duplicate checks run under the write lock, so the error can name the existing row; the
    // UNIQUE indexes are the backstop for writers that skip these checks.
    const op: LedgerWrite = {
      kind: "invocation",
      invocationId: clean.invocationId,
      threadId: clean.threadId,
      toolCallId: clean.toolCallId,
      values,
      objects: objects ?? [],
    };
    return this.#enqueue(op);
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    const row = this.#read("SELECT * FROM invocations WHERE invocation_id = ?").get(invocationId);
    return row === undefined ? undefined : toInvocation(row as Row);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    const row = this.#read("SELECT * FROM invocations WHERE thread_id = ? AND tool_call_id = ?").get(
      threadId,
      toolCallId,
    );
    return row === undefined ? undefined : toInvocation(row as Row);
  }

  async query(query: LedgerQuery = {}): Promise<InvocationRecord[]> {
    const normalized = normalizeLedgerQuery(query);
    const cursor = normalized.after === undefined ? undefined : this.#cursorOf(normalized.after);
    return (this.#all(pageStatement(normalized, SQLITE_DIALECT, cursor)) as Row[]).map(toInvocation);
  }

  async count(query: LedgerQuery = {}): Promise<number> {
    const [row] = this.#all(countStatement(normalizeLedgerQuery(query), SQLITE_DIALECT)) as { n: number }[];
    return row?.n ?? 0;
  }

  async activity(query: LedgerQuery & { bucketMs: number }): Promise<LedgerActivityBucket[]> {
    const normalized = normalizeActivityQuery(query);
    const [span] = this.#all(spanStatement(SQLITE_DIALECT)) as Row[];
    if (!checkActivitySpan(normalized, span)) return [];
    const rows = this.#all(activityStatement(normalized, SQLITE_DIALECT));
    return toActivityBuckets(rows as { bucket: number; source_id: string; status: string; n: number }[]);
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    // Separate statements with and without the session filter, so the session index is usable.
    const params = options.sessionId ? [options.sessionId] : [];
    const where = (...conditions: string[]) => {
      const all = options.sessionId ? ["session_id = ?", ...conditions] : conditions;
      return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
    };
    const totals = this.#read(
      `SELECT COUNT(*) AS calls, TOTAL(status = 'ok') AS ok, TOTAL(status = 'error') AS errors,
        TOTAL(cache_hit) AS cacheHits, TOTAL(queue_wait_ms) AS totalQueueWaitMs FROM invocations ${where()}`,
    ).get(...params) as Omit<LedgerSummary, "byErrorCode" | "bySource">;
    const byCode = this.#read(
      `SELECT json_extract(error, '$.code') AS k, COUNT(*) AS n FROM invocations
        ${where("status = 'error'")} GROUP BY k`,
    ).all(...params) as { k: string; n: number }[];
    const bySource = this.#read(
      `SELECT source_id AS k, COUNT(*) AS n FROM invocations ${where()} GROUP BY k`,
    ).all(...params) as { k: string; n: number }[];
    const tally = (rows: { k: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.k, r.n]));
    return { ...totals, byErrorCode: tally(byCode), bySource: tally(bySource) };
  }

  appendAuthorization(record: AuthorizationRecord): Promise<void> {
    let clean: AuthorizationRecord;
    let values: unknown[];
    try {
      this.#ensureOpen();
      clean = normalizeAuthorizationRecord(record);
      values = AUTHORIZATION_FIELDS.map((field) => clean[field] ?? null);
      values.push(Date.parse(clean.createdAt));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue({ kind: "authorization", id: clean.id, values });
  }

  async getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    const row = this.#read("SELECT * FROM authorizations WHERE id = ?").get(id);
    return row === undefined ? undefined : fromColumns<AuthorizationRecord>(row as Row, AUTHORIZATION_FIELDS);
  }

  async listAuthorizations(options: AuthorizationListOptions = {}): Promise<AuthorizationRecord[]> {
    const { sessionId, order, limit } = normalizeAuthorizationListing(options);
    const direction = order === "desc" ? "DESC" : "ASC";
    const where = sessionId === undefined ? "" : "WHERE session_id = ?";
    const rows = this.#read(
      `SELECT * FROM authorizations ${where} ORDER BY created_ms ${direction}, seq ${direction} LIMIT ?`,
    ).all(...(sessionId === undefined ? [] : [sessionId]), limit ?? -1) as Row[];
    return rows.map((row) => fromColumns<AuthorizationRecord>(row, AUTHORIZATION_FIELDS));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      this.#commitPending();
    } finally {
      this.#closed = true;
      this.#stopCommitAtExit();
      this.#statements.clear();
      // The thread's connection closes first, so that this one, the last, checkpoints the log.
      await this.#checkpointer?.close().catch(() => undefined);
      this.#db.close();
    }
  }

  /** Where the row `after` names sits in the ledger's order. */
  #cursorOf(after: string): LedgerCursor {
    const cursor = this.#read(
      "SELECT started_ms AS startedMs, seq FROM invocations WHERE invocation_id = ?",
    ).get(after) as LedgerCursor | undefined;
    if (cursor === undefined) throw unknownCursorError(after);
    return cursor;
  }

  #getObject(sha256: string): Uint8Array | undefined {
    const row = this.#read("SELECT bytes FROM objects WHERE sha256 = ?").get(sha256) as
      | { bytes: Buffer }
      | undefined;
    return row === undefined
      ? undefined
      : new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
  }

  #verifyObjects(): string[] {
    const bad: string[] = [];
    const rows = this.#read("SELECT sha256, bytes FROM objects ORDER BY sha256").iterate();
    for (const { sha256, bytes } of rows as Iterable<{ sha256: string; bytes: Buffer }>) {
      if (sha256Hex(bytes) !== sha256) bad.push(`sha256:${sha256}`);
    }
    return bad;
  }

  /**
   * Queues a write for the next group commit, which runs on the event loop's next turn (so that calls
   * finishing together, and work still waiting on I/O, share it), or at once when the queue is full.
   * While a checkpoint runs, the queue waits for it.
   */
  #enqueue(op: LedgerWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const queued = this.#pending.push({ op, resolve, reject });
      if (queued >= MAX_QUEUED_WRITES) this.#commitPending();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          if (!this.#checkpointer?.busy) this.#commitPending();
        });
      }
    });
  }

  /** Commits every queued write in one IMMEDIATE transaction (see `ledger-writer.cjs`). */
  #commitPending(): void {
    const batch = this.#pending;
    if (batch.length === 0 || !this.#db.open) return;
    this.#pending = [];
    let results: LedgerWriteResult[];
    try {
      results = this.#writer.commit(batch.map((item) => item.op));
    } catch (error) {
      // A failed transaction (busy, disk full): none of the batch is stored.
      for (const item of batch) item.reject(error);
      return;
    }
    let stored = 0;
    batch.forEach((item, index) => {
      const result = results[index];
      if (result !== undefined && "stored" in result) {
        stored++;
        item.resolve();
      } else item.reject(writeError(item.op, result));
    });
    this.#checkpointer?.committed(stored);
  }

  /** A statement for a read, after the queued writes are committed (reads see every earlier append). */
  #read(sql: string): BetterSqlite3.Statement {
    this.#ensureOpen();
    this.#commitPending();
    return this.#statement(sql);
  }

  /** The rows of a built statement, read as `#read` does. */
  #all({ sql, params }: LedgerStatement): unknown[] {
    return this.#read(sql).all(...params);
  }

  #statement(sql: string): BetterSqlite3.Statement {
    this.#ensureOpen();
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedLedgerError();
  }
}

/** The checkpointer of a ledger file, or `undefined` when no thread can be started (SQLite then checkpoints). */
function startCheckpointer(db: Database, path: string, onIdle: () => void): LedgerCheckpointer | undefined {
  try {
    return new LedgerCheckpointer(db, path, onIdle);
  } catch {
    return undefined;
  }
}

/** The error of a write that was not stored. */
function writeError(op: LedgerWrite, result: LedgerWriteResult | undefined): Error {
  if (result === undefined) return new Error("The ledger writer returned no result for a write.");
  if ("duplicate" in result) return duplicateOf(op, result.existingInvocationId);
  if ("failed" in result) return Object.assign(new Error(result.failed), { code: result.code });
  return new Error("The write was stored.");
}

/** The `DUPLICATE_ID` error of a write whose key is already recorded, naming the recorded row. */
function duplicateOf(op: LedgerWrite, existingInvocationId: string | undefined): Error {
  if (op.kind === "authorization") return duplicateError(`Authorization ${op.id} is already recorded.`);
  if (existingInvocationId === op.invocationId) {
    return duplicateError(`Invocation ${op.invocationId} is already recorded.`, op.invocationId);
  }
  return duplicateError(
    `Tool call ${op.toolCallId} of thread ${op.threadId} is already recorded as ${existingInvocationId}.`,
    existingInvocationId,
  );
}

function migrate(db: Database, path: string): void {
  migrateSchema(db, { versionTable: "schema_version", label: "Ledger", path, migrations: MIGRATIONS });
}

function fromColumns<T>(row: Row, fields: readonly string[]): T {
  const out: Row = {};
  for (const field of fields) {
    const value = row[column(field)];
    if (value !== null && value !== undefined) out[field] = value;
  }
  return out as T;
}

function toInvocation(row: Row): InvocationRecord {
  const record = fromColumns<InvocationRecord>(row, INVOCATION_FIELDS);
  record.cacheHit = row.cache_hit === 1;
  if (typeof row.error === "string") record.error = JSON.parse(row.error);
  return record;
}
