/**
 * The embedded ledger store: SQLite through better-sqlite3 in WAL mode. Only `open()` loads better-sqlite3
 * (through `openSqlite`), so importing Sciencegate does not pay for the native addon.
 */
import type BetterSqlite3 from "better-sqlite3";
import { GovernanceError, migrateSchema, openSqlite, sha256Hex } from "../../core/index.js";
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
  createSqliteCommitter,
  LedgerCheckpointer,
  type SqliteCommitter,
  type SqliteWriteOp,
  type SqliteWriteResult,
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
import { closedLedgerError, duplicateError } from "./ledger-record.js";
import { decodeLedgerText, encodeLedgerText, reencodeStoredText } from "./ledger-text.js";

type Database = BetterSqlite3.Database;
type Row = Record<string, unknown>;

/** The text columns of each table (and `error`, JSON kept as text): what the text encoding covers. */
const INVOCATION_TEXT_COLUMNS = `invocation_id session_id thread_id tool_call_id run_id source_id tool_id
  mcp_tool_name status started_at finished_at request_ref raw_ref normalized_ref authorization_id license
  catalog_revision tool_definition_hash input_hash error`.split(/\s+/);
const AUTHORIZATION_TEXT_COLUMNS = `id session_id thread_id tool_call_id source_id tool_id action resource
  decision_source created_at`.split(/\s+/);
/** How SQLite spells the re-encoding of U+FFFF (see `reencodeStoredText`). */
const SQLITE_REENCODE = {
  replace: (c: string) => `replace(${c}, char(65535), char(65535, 57345))`,
  contains: (c: string) => `instr(${c}, char(65535)) > 0`,
};

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
  // Text is stored through one reversible encoding (`ledger-text.ts`): a U+FFFF written before it
  // existed is escaped, so that it reads back as itself.
  reencodeStoredText("invocations", INVOCATION_TEXT_COLUMNS, SQLITE_REENCODE) +
    reencodeStoredText("authorizations", AUTHORIZATION_TEXT_COLUMNS, SQLITE_REENCODE),
  // Who each call and authorization was for (absent on rows of a single-user setup), and the console's
  // filter by it.
  `ALTER TABLE invocations ADD COLUMN principal TEXT;
   ALTER TABLE authorizations ADD COLUMN principal TEXT;
   CREATE INDEX invocations_principal ON invocations (principal, started_ms, seq)
     WHERE principal IS NOT NULL;
   CREATE INDEX authorizations_principal ON authorizations (principal, created_ms)
     WHERE principal IS NOT NULL;`,
];

/** Invocation fields stored in a column of the same name in snake_case (cacheHit and error are converted). */
const INVOCATION_FIELDS =
  `invocationId sessionId principal threadId toolCallId runId sourceId toolId mcpToolName status
  startedAt finishedAt durationMs attempts queueWaitMs requestRef rawRef normalizedRef authorizationId license
  catalogRevision toolDefinitionHash inputHash`.split(/\s+/) as (keyof InvocationRecord)[];
const AUTHORIZATION_FIELDS =
  `id sessionId principal threadId toolCallId sourceId toolId action resource decisionSource
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
    params.push(typeof value === "string" ? encodeLedgerText(value) : value);
    return "?";
  },
  errorCode: "json_extract(error, '$.code')",
  errorMessage: "json_extract(error, '$.message')",
  cacheHit: (value) => (value ? 1 : 0),
  contains: (column, pattern) => `${column} LIKE ${pattern} ESCAPE '\\'`,
};

/** The statements of the batch commit (`sqlite-ledger-commit.cjs`), prepared on its connection. */
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
 * A durable ledger's inline object limit: the default when unset, else a non-negative integer.
 * @throws GovernanceError `INVALID_CONFIG` naming the ledger for any other value
 */
export function inlineLimit(ledger: string, maxInlineBytes: number | undefined): number {
  const limit = maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `${ledger} maxInlineBytes must be a non-negative integer (0 keeps no objects inline); got ${String(limit)}.`,
    );
  }
  return limit;
}

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

/**
 * A `LedgerStore` in one SQLite file (`journal_mode=WAL`, `synchronous=NORMAL`, `busy_timeout=5000`),
 * safe to open from several processes at once. Small objects of a row live in its `objects` table,
 * written in the row's transaction. A batch commits in one IMMEDIATE transaction, each write in a
 * savepoint of its own, so one refused row does not undo the others. WAL checkpoints run in a thread
 * of the ledger's own (`LedgerCheckpointer`) while batches go on; a batch waits only for one that holds
 * commits back, once the log has grown past its bound. Text goes through the
 * ledger's reversible encoding (`ledger-text.ts`), so a NUL character is stored and searched like any other.
 * @example
 * const store = await SqliteLedger.open(join(resolveDataDir(), "ledger.sqlite"));
 * const ledger = new LedgerWriter(store);
 */
export class SqliteLedger implements LedgerStore {
  /** Absolute path of the database file, or `:memory:`. */
  readonly path: string;
  readonly objects: LedgerObjects | undefined;
  readonly #db: Database;
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  #closed = false;
  readonly #committer: SqliteCommitter;
  readonly #checkpointer: LedgerCheckpointer | undefined;
  /** Batches waiting for a running checkpoint to end. */
  #waitingForCheckpoint: (() => void)[] = [];

  private constructor(db: Database, path: string, maxInlineBytes: number, checkpointThread: boolean) {
    this.#db = db;
    this.#committer = createSqliteCommitter(db, LEDGER_WRITE_SQL);
    this.#checkpointer =
      checkpointThread && path !== ":memory:"
        ? startCheckpointer(db, path, () => {
            for (const go of this.#waitingForCheckpoint.splice(0)) go();
          })
        : undefined;
    this.path = path;
    this.objects =
      maxInlineBytes > 0
        ? {
            maxInlineBytes,
            get: async (sha256) => this.#getObject(sha256),
            verifyAll: async () => this.#verifyObjects(),
          }
        : undefined;
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
    const maxInlineBytes = inlineLimit("SqliteLedger", options.maxInlineBytes);
    const opened = await openSqlite(path, migrate);
    return new SqliteLedger(opened.db, opened.path, maxInlineBytes, options.checkpointThread ?? true);
  }

  /**
   * Whether checkpoints run in the ledger's thread, how many it has run and how many of them held commits
   * back. For tests and diagnostics.
   */
  get checkpoints(): { thread: boolean; count: number; held: number } {
    return {
      thread: this.#checkpointer?.active ?? false,
      count: this.#checkpointer?.checkpoints ?? 0,
      held: this.#checkpointer?.held ?? 0,
    };
  }

  async appendBatch(
    writes: readonly LedgerWrite[],
    options: LedgerBatchOptions = {},
  ): Promise<LedgerWriteResult[]> {
    this.#ensureOpen();
    // A checkpoint that holds commits back reaches the end of the log: no commit adds to it meanwhile.
    if (this.#checkpointer?.busy) {
      await new Promise<void>((resolve) => this.#waitingForCheckpoint.push(resolve));
      this.#ensureOpen();
    }
    const ops = writes.map(toOp);
    let results: SqliteWriteResult[];
    try {
      results = options.again ? this.#committer.commitAgain(ops) : this.#committer.commit(ops);
    } catch (error) {
      throw commitError(this.path, error);
    }
    const settled = ops.map((op, index) => toResult(op, results[index]));
    this.#checkpointer?.committed(settled.filter((result) => "stored" in result).length);
    return settled;
  }

  appendBatchNow(writes: readonly LedgerWrite[]): void {
    this.#ensureOpen();
    const results = this.#committer.commitAgain(writes.map(toOp));
    const refused = results.filter((result) => !("stored" in result));
    if (refused.length > 0) throw new Error(`${refused.length} of ${writes.length} write(s) refused.`);
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    const row = this.#read("SELECT * FROM invocations WHERE invocation_id = ?").get(
      encodeLedgerText(invocationId),
    );
    return row === undefined ? undefined : toInvocation(row as Row);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    const row = this.#read("SELECT * FROM invocations WHERE thread_id = ? AND tool_call_id = ?").get(
      encodeLedgerText(threadId),
      encodeLedgerText(toolCallId),
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
    const rows = this.#all(activityStatement(normalized, SQLITE_DIALECT)) as {
      bucket: number;
      source_id: string;
      status: string;
      n: number;
    }[];
    return toActivityBuckets(rows.map((row) => ({ ...row, source_id: decodeLedgerText(row.source_id) })));
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    // Separate statements with and without the session filter, so the session index is usable.
    const params = options.sessionId ? [encodeLedgerText(options.sessionId)] : [];
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
    const tally = (rows: { k: string; n: number }[]) =>
      Object.fromEntries(rows.map((r) => [decodeLedgerText(r.k), r.n]));
    return { ...totals, byErrorCode: tally(byCode), bySource: tally(bySource) };
  }

  async getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    const row = this.#read("SELECT * FROM authorizations WHERE id = ?").get(encodeLedgerText(id));
    return row === undefined ? undefined : fromColumns<AuthorizationRecord>(row as Row, AUTHORIZATION_FIELDS);
  }

  async listAuthorizations(options: AuthorizationListOptions = {}): Promise<AuthorizationRecord[]> {
    const { sessionId, principal, order, limit } = normalizeAuthorizationListing(options);
    const direction = order === "desc" ? "DESC" : "ASC";
    const filters = Object.entries({ session_id: sessionId, principal }).filter(
      ([, value]) => value !== undefined,
    );
    const where = filters.length === 0 ? "" : `WHERE ${filters.map(([name]) => `${name} = ?`).join(" AND ")}`;
    const params = filters.map(([, value]) => encodeLedgerText(value as string));
    const rows = this.#read(
      `SELECT * FROM authorizations ${where} ORDER BY created_ms ${direction}, seq ${direction} LIMIT ?`,
    ).all(...params, limit ?? -1) as Row[];
    return rows.map((row) => fromColumns<AuthorizationRecord>(row, AUTHORIZATION_FIELDS));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    for (const go of this.#waitingForCheckpoint.splice(0)) go();
    // The thread's connection closes first, so that this one, the last, checkpoints the log.
    await this.#checkpointer?.close().catch(() => undefined);
    this.#db.close();
  }

  /** Where the row `after` names sits in the ledger's order. */
  #cursorOf(after: string): LedgerCursor {
    const cursor = this.#read(
      "SELECT started_ms AS startedMs, seq FROM invocations WHERE invocation_id = ?",
    ).get(encodeLedgerText(after)) as LedgerCursor | undefined;
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

  /** A prepared statement for a read. */
  #read(sql: string): BetterSqlite3.Statement {
    this.#ensureOpen();
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** The rows of a built statement. */
  #all({ sql, params }: LedgerStatement): unknown[] {
    return this.#read(sql).all(...params);
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

/** A write as the commit applies it: its column values in order, every text encoded. */
function toOp(write: LedgerWrite): SqliteWriteOp {
  if (write.kind === "authorization") {
    const { record } = write;
    const values: unknown[] = AUTHORIZATION_FIELDS.map((field) => encodeValue(record[field]));
    values.push(Date.parse(record.createdAt));
    return { kind: "authorization", id: encodeLedgerText(record.id), values, objects: write.objects ?? [] };
  }
  const { record } = write;
  const values: unknown[] = INVOCATION_FIELDS.map((field) => encodeValue(record[field]));
  const { error } = record;
  values.push(
    record.cacheHit ? 1 : 0,
    Date.parse(record.startedAt),
    error === undefined
      ? null
      : JSON.stringify({
          ...error,
          code: encodeLedgerText(error.code),
          message: encodeLedgerText(error.message),
        }),
  );
  return {
    kind: "invocation",
    invocationId: encodeLedgerText(record.invocationId),
    threadId: record.threadId === undefined ? undefined : encodeLedgerText(record.threadId),
    toolCallId: record.toolCallId === undefined ? undefined : encodeLedgerText(record.toolCallId),
    values,
    objects: write.objects,
  };
}

function encodeValue(value: unknown): unknown {
  if (value === undefined) return null;
  return typeof value === "string" ? encodeLedgerText(value) : value;
}

/** One write's result as the port says it. */
function toResult(op: SqliteWriteOp, result: SqliteWriteResult | undefined): LedgerWriteResult {
  if (result !== undefined && "stored" in result) return { stored: true };
  if (result !== undefined && "duplicate" in result)
    return { refused: duplicateOf(op, result.existingInvocationId) };
  const message = result === undefined ? "no result" : result.failed;
  return { refused: new GovernanceError("INVALID_INPUT", `SQLite refused the ledger row: ${message}.`) };
}

/** The `DUPLICATE_ID` error of a write whose key is already recorded, naming the recorded row. */
function duplicateOf(op: SqliteWriteOp, existing: string | undefined): GovernanceError {
  if (op.kind === "authorization") {
    return duplicateError(`Authorization ${decodeLedgerText(op.id)} is already recorded.`);
  }
  const invocationId = decodeLedgerText(op.invocationId);
  const existingInvocationId = existing === undefined ? undefined : decodeLedgerText(existing);
  if (existingInvocationId === invocationId) {
    return duplicateError(`Invocation ${invocationId} is already recorded.`, invocationId);
  }
  return duplicateError(
    `Tool call ${decodeLedgerText(op.toolCallId ?? "")} of thread ${decodeLedgerText(op.threadId ?? "")} is already recorded as ${existingInvocationId}.`,
    existingInvocationId,
  );
}

/** A failed transaction: nothing of the batch is stored. A busy or locked file may be free later. */
function commitError(path: string, error: unknown): GovernanceError {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  const message = error instanceof Error ? error.message : String(error);
  return new GovernanceError("UPSTREAM_UNAVAILABLE", `The ledger ${path} failed to commit: ${message}.`, {
    retryable: code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"),
    cause: error,
  });
}

function migrate(db: Database, path: string): void {
  migrateSchema(db, { versionTable: "schema_version", label: "Ledger", path, migrations: MIGRATIONS });
}

function fromColumns<T>(row: Row, fields: readonly string[]): T {
  const out: Row = {};
  for (const field of fields) {
    const value = row[column(field)];
    if (value !== null && value !== undefined)
      out[field] = typeof value === "string" ? decodeLedgerText(value) : value;
  }
  return out as T;
}

function toInvocation(row: Row): InvocationRecord {
  const record = fromColumns<InvocationRecord>(row, INVOCATION_FIELDS);
  record.cacheHit = row.cache_hit === 1;
  if (typeof row.error === "string") {
    const error = JSON.parse(row.error) as NonNullable<InvocationRecord["error"]>;
    record.error = { ...error, code: decodeLedgerText(error.code), message: decodeLedgerText(error.message) };
  }
  return record;
}
