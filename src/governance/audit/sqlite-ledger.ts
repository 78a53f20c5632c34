/**
 * The embedded ledger: SQLite through better-sqlite3 in WAL mode. Only `open()` loads better-sqlite3
 * (through `openSqlite`), so importing Sciencegate does not pay for the native addon.
 */
import type BetterSqlite3 from "better-sqlite3";
import { migrateSchema, openSqlite } from "../../core/index.js";
import {
  type AuthorizationRecord,
  closedLedgerError,
  duplicateError,
  type InvocationRecord,
  type Ledger,
  type LedgerQuery,
  type LedgerSummary,
  normalizeAuthorizationRecord,
  normalizeInvocationRecord,
  normalizeLedgerQuery,
} from "./ledger.js";

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
];

/** Invocation fields stored in a column of the same name in snake_case (cacheHit and error are converted). */
const INVOCATION_FIELDS = `invocationId sessionId threadId toolCallId runId sourceId toolId mcpToolName status
  startedAt finishedAt durationMs attempts queueWaitMs requestRef rawRef normalizedRef authorizationId license
  catalogRevision toolDefinitionHash inputHash`.split(/\s+/) as (keyof InvocationRecord)[];
const AUTHORIZATION_FIELDS = `id sessionId threadId toolCallId sourceId toolId action resource decisionSource
  createdAt epoch`.split(/\s+/) as (keyof AuthorizationRecord)[];

function column(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * A `Ledger` in one SQLite file (`journal_mode=WAL`, `synchronous=NORMAL`, `busy_timeout=5000`), safe to
 * open from several processes at once. Writes are synchronous, each in its own transaction.
 * @example
 * const ledger = await SqliteLedger.open(join(resolveDataDir(), "ledger.sqlite"));
 */
export class SqliteLedger implements Ledger {
  /** Absolute path of the database file, or `:memory:`. */
  readonly path: string;
  readonly #db: Database;
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  #closed = false;

  private constructor(db: Database, path: string) {
    this.#db = db;
    this.path = path;
  }

  /**
   * Opens (creating the file and its parent directories if needed) and migrates a ledger.
   * @param path a file path, or `":memory:"` for a private in-memory database
   * @returns the open ledger
   * @throws GovernanceError `INVALID_CONFIG` when the file was written by a newer schema version
   */
  static async open(path: string): Promise<SqliteLedger> {
    const opened = await openSqlite(path, migrate);
    return new SqliteLedger(opened.db, opened.path);
  }

  async append(record: InvocationRecord): Promise<void> {
    const clean = normalizeInvocationRecord(record);
    const row: Row = { cache_hit: clean.cacheHit ? 1 : 0, started_ms: Date.parse(clean.startedAt) };
    for (const field of INVOCATION_FIELDS) row[column(field)] = clean[field] ?? null;
    row.error = clean.error === undefined ? null : JSON.stringify(clean.error);
    const columns = Object.keys(row);
    const insert = this.#statement(
      `INSERT INTO invocations (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
    );
    // Check and insert under one write lock, so the error can name the existing row; the UNIQUE
    // indexes are the backstop for writers that skip these checks.
    this.#transaction(() => {
      const sameId = this.#statement("SELECT invocation_id FROM invocations WHERE invocation_id = ?");
      if (sameId.get(clean.invocationId)) {
        throw duplicateError(`Invocation ${clean.invocationId} is already recorded.`, clean.invocationId);
      }
      if (clean.threadId !== undefined && clean.toolCallId !== undefined) {
        const existing = this.#findRow(clean.threadId, clean.toolCallId);
        if (existing) {
          const existingId = String(existing.invocation_id);
          throw duplicateError(
            `Tool call ${clean.toolCallId} of thread ${clean.threadId} is already recorded as ${existingId}.`,
            existingId,
          );
        }
      }
      insert.run(row);
    });
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    const row = this.#statement("SELECT * FROM invocations WHERE invocation_id = ?").get(invocationId);
    return row === undefined ? undefined : toInvocation(row as Row);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    this.#ensureOpen();
    const row = this.#findRow(threadId, toolCallId);
    return row === undefined ? undefined : toInvocation(row);
  }

  async query(query: LedgerQuery = {}): Promise<InvocationRecord[]> {
    const { filters, order, limit } = normalizeLedgerQuery(query);
    const entries = Object.entries(filters);
    const where = entries.map(([field]) => `${column(field)} = ?`).join(" AND ");
    const direction = order === "desc" ? "DESC" : "ASC";
    const sql = `SELECT * FROM invocations ${where ? `WHERE ${where}` : ""}
      ORDER BY started_ms ${direction}, seq ${direction} LIMIT ?`;
    const rows = this.#statement(sql).all(...entries.map(([, value]) => value), limit ?? -1);
    return (rows as Row[]).map(toInvocation);
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    // Separate statements with and without the session filter, so the session index is usable.
    const params = options.sessionId ? [options.sessionId] : [];
    const where = (...conditions: string[]) => {
      const all = options.sessionId ? ["session_id = ?", ...conditions] : conditions;
      return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
    };
    const totals = this.#statement(
      `SELECT COUNT(*) AS calls, TOTAL(status = 'ok') AS ok, TOTAL(status = 'error') AS errors,
        TOTAL(cache_hit) AS cacheHits, TOTAL(queue_wait_ms) AS totalQueueWaitMs FROM invocations ${where()}`,
    ).get(...params) as Omit<LedgerSummary, "byErrorCode" | "bySource">;
    const byCode = this.#statement(
      `SELECT json_extract(error, '$.code') AS k, COUNT(*) AS n FROM invocations
        ${where("status = 'error'")} GROUP BY k`,
    ).all(...params) as { k: string; n: number }[];
    const bySource = this.#statement(
      `SELECT source_id AS k, COUNT(*) AS n FROM invocations ${where()} GROUP BY k`,
    ).all(...params) as { k: string; n: number }[];
    const tally = (rows: { k: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.k, r.n]));
    return { ...totals, byErrorCode: tally(byCode), bySource: tally(bySource) };
  }

  async appendAuthorization(record: AuthorizationRecord): Promise<void> {
    const clean = normalizeAuthorizationRecord(record);
    const row: Row = { created_ms: Date.parse(clean.createdAt) };
    for (const field of AUTHORIZATION_FIELDS) row[column(field)] = clean[field] ?? null;
    const columns = Object.keys(row);
    const insert = this.#statement(
      `INSERT INTO authorizations (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
    );
    this.#transaction(() => {
      if (this.#statement("SELECT id FROM authorizations WHERE id = ?").get(clean.id)) {
        throw duplicateError(`Authorization ${clean.id} is already recorded.`);
      }
      insert.run(row);
    });
  }

  async listAuthorizations(options: { sessionId?: string } = {}): Promise<AuthorizationRecord[]> {
    const rows = (
      options.sessionId
        ? this.#statement("SELECT * FROM authorizations WHERE session_id = ? ORDER BY created_ms, seq").all(
            options.sessionId,
          )
        : this.#statement("SELECT * FROM authorizations ORDER BY created_ms, seq").all()
    ) as Row[];
    return rows.map((row) => fromColumns<AuthorizationRecord>(row, AUTHORIZATION_FIELDS));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }

  #findRow(threadId: string, toolCallId: string): Row | undefined {
    const statement = this.#statement("SELECT * FROM invocations WHERE thread_id = ? AND tool_call_id = ?");
    return statement.get(threadId, toolCallId) as Row | undefined;
  }

  #transaction(body: () => void): void {
    this.#ensureOpen();
    // IMMEDIATE takes the write lock up front, so the duplicate check and the insert see the same state.
    this.#db.transaction(body).immediate();
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
