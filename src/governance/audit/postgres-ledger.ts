/**
 * The ledger store of a multi-replica deployment: rows, authorizations and small objects in PostgreSQL
 * (see ARCHITECTURE.md, "State: who owns what"). Same semantics as `SqliteLedger`: a batch in one
 * commit, duplicates refused per row, objects all or nothing with their row, every text stored
 * reversibly (`ledger-text.ts`).
 */
import {
  type Clock,
  GovernanceError,
  isTransientPostgresError,
  migratePostgresSchema,
  type PostgresDatabase,
  type SqlValue,
  sha256Hex,
  systemClock,
} from "../../core/index.js";
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
import { closedLedgerError, duplicateError } from "./ledger-record.js";
import { decodeLedgerText, encodeLedgerText } from "./ledger-text.js";
import {
  insertBatchStatement,
  LEDGER_MIGRATIONS,
  type Row,
  toAuthorization,
  toInvocation,
} from "./postgres-ledger-sql.js";
import { inlineLimit } from "./sqlite-ledger.js";

/** Objects re-hashed per page by `verifyAll`, so memory stays bounded by a page. */
const VERIFY_PAGE = 64;
/** A read that lost its connection is tried again this many times, on a fresh one. */
const READ_ATTEMPTS = 4;
const FIRST_READ_PAUSE_MS = 20;

/**
 * How PostgreSQL spells a query's conditions. lower() under the "C" collation folds ASCII letters only,
 * as SQLite's LIKE does, whatever the database's locale (and costs half what ILIKE does).
 */
const POSTGRES_DIALECT: LedgerSqlDialect = {
  table: "sciencegate_invocations",
  bind: (params, value) => `$${params.push(typeof value === "string" ? encodeLedgerText(value) : value)}`,
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
  /** Times the pauses before a read that lost its connection is tried again. @default systemClock */
  clock?: Clock;
}

/**
 * A `LedgerStore` in PostgreSQL, shared by every replica that opens the same database. A batch is one
 * statement and one commit (its invocation rows, authorization rows and objects); a duplicate row
 * (invocation id, or thread and tool call) is refused alone and its objects are not stored. A read that
 * loses its connection is tried again on a fresh one; a batch that does is reported retryable, for the
 * `LedgerWriter` to try again. At process exit, a batch is written through a short-lived child process
 * (`PostgresDatabase.runSync`). The store does not own the database: whoever opened it closes it.
 * @example
 * const db = await openPostgres(process.env.SCIENCEGATE_DATABASE_URL!);
 * const store = await PostgresLedger.open(db);
 * const ledger = new LedgerWriter(store);
 * // … ledger.close(); store.close(); then db.close()
 */
export class PostgresLedger implements LedgerStore {
  readonly objects: LedgerObjects | undefined;
  readonly #db: PostgresDatabase;
  readonly #clock: Clock;
  #closed = false;

  private constructor(db: PostgresDatabase, maxInlineBytes: number, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    this.objects =
      maxInlineBytes > 0
        ? {
            maxInlineBytes,
            get: (sha256) => this.#getObject(sha256),
            verifyAll: () => this.#verifyObjects(),
          }
        : undefined;
  }

  /**
   * Migrates the ledger's tables (once across replicas) and returns the ledger.
   * @param db the open database (see `openPostgres`)
   * @param options the inline object limit
   * @returns the ledger
   * @throws GovernanceError `INVALID_CONFIG` for a newer schema or a bad `maxInlineBytes`
   */
  static async open(db: PostgresDatabase, options: PostgresLedgerOptions = {}): Promise<PostgresLedger> {
    const maxInlineBytes = inlineLimit("PostgresLedger", options.maxInlineBytes);
    await migratePostgresSchema(db, { store: "ledger", migrations: LEDGER_MIGRATIONS });
    return new PostgresLedger(db, maxInlineBytes, options.clock ?? systemClock);
  }

  async appendBatch(
    writes: readonly LedgerWrite[],
    options: LedgerBatchOptions = {},
  ): Promise<LedgerWriteResult[]> {
    this.#ensureOpen();
    const results = new Map<LedgerWrite, LedgerWriteResult>();
    // An id repeated inside one batch waits for a later statement: the stored ids of a statement then
    // tell its writes apart, and a row's objects follow its own row.
    for (let rest = [...writes]; rest.length > 0; ) {
      const seen = new Set<string>();
      const now: LedgerWrite[] = [];
      const later: LedgerWrite[] = [];
      for (const write of rest) {
        const key = keyOf(write);
        if (seen.has(key)) later.push(write);
        else {
          seen.add(key);
          now.push(write);
        }
      }
      await this.#commit(now, options.again === true, results);
      rest = later;
    }
    return writes.map(
      (write) => results.get(write) ?? { refused: new GovernanceError("INVALID_INPUT", "No result.") },
    );
  }

  appendBatchNow(writes: readonly LedgerWrite[]): void {
    this.#ensureOpen();
    // One statement per write, each in a savepoint of its own; a row already stored is skipped.
    const { failed, error } = this.#db.runSync(writes.map((write) => insertBatchStatement([write])));
    if (failed > 0)
      throw new Error(`${failed} of ${writes.length} write(s) not committed to ${this.#db.label}: ${error}`);
  }

  async get(invocationId: string): Promise<InvocationRecord | undefined> {
    const [row] = await this.#read("SELECT * FROM sciencegate_invocations WHERE invocation_id = $1", [
      encodeLedgerText(invocationId),
    ]);
    return row && toInvocation(row);
  }

  async findByCall(threadId: string, toolCallId: string): Promise<InvocationRecord | undefined> {
    const [row] = await this.#read(
      "SELECT * FROM sciencegate_invocations WHERE thread_id = $1 AND tool_call_id = $2",
      [encodeLedgerText(threadId), encodeLedgerText(toolCallId)],
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
    return toActivityBuckets(
      (rows as { bucket: string; source_id: string; status: string; n: string }[]).map((row) => ({
        ...row,
        source_id: decodeLedgerText(row.source_id),
      })),
    );
  }

  async summary(options: { sessionId?: string } = {}): Promise<LedgerSummary> {
    const params = options.sessionId ? [encodeLedgerText(options.sessionId)] : [];
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
    const tally = (rows: Row[]) =>
      Object.fromEntries(rows.map((r) => [decodeLedgerText(String(r.k)), Number(r.n)]));
    return {
      ...(totals as unknown as Omit<LedgerSummary, "byErrorCode" | "bySource">),
      byErrorCode: tally(byCode),
      bySource: tally(bySource),
    };
  }

  async getAuthorization(id: string): Promise<AuthorizationRecord | undefined> {
    const [row] = await this.#read("SELECT * FROM sciencegate_authorizations WHERE id = $1", [
      encodeLedgerText(id),
    ]);
    return row && toAuthorization(row);
  }

  async listAuthorizations(options: AuthorizationListOptions = {}): Promise<AuthorizationRecord[]> {
    const { sessionId, principal, order, limit } = normalizeAuthorizationListing(options);
    const direction = order === "desc" ? "DESC" : "ASC";
    const filters = Object.entries({ session_id: sessionId, principal }).filter(
      ([, value]) => value !== undefined,
    );
    const where =
      filters.length === 0 ? "" : `WHERE ${filters.map(([name], i) => `${name} = $${i + 1}`).join(" AND ")}`;
    const params = filters.map(([, value]) => encodeLedgerText(value as string));
    const rows = await this.#read(
      `SELECT * FROM sciencegate_authorizations ${where}
       ORDER BY created_ms ${direction}, seq ${direction} LIMIT $${params.length + 1}`,
      [...params, limit ?? null],
    );
    return rows.map(toAuthorization);
  }

  /** Refuses every later call. The database stays open. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Commits writes with distinct ids in one statement and records each one's result. */
  async #commit(
    writes: readonly LedgerWrite[],
    again: boolean,
    results: Map<LedgerWrite, LedgerWriteResult>,
  ): Promise<void> {
    const { sql, params, name } = insertBatchStatement(writes);
    let stored: { kind: string; id: string }[];
    try {
      stored = await this.#db.query<{ kind: string; id: string }>(sql, params, { name });
    } catch (error) {
      // A value PostgreSQL refuses fails the whole statement: then each write goes alone, so that it
      // fails alone.
      if (isDataError(error) && writes.length > 1) {
        for (const write of writes) await this.#commit([write], again, results);
        return;
      }
      if (isDataError(error)) {
        results.set(writes[0] as LedgerWrite, {
          refused: new GovernanceError(
            "INVALID_INPUT",
            `PostgreSQL refused the ledger row: ${messageOf(error)}.`,
            {
              cause: error,
            },
          ),
        });
        return;
      }
      throw storeError(this.#db.label, error);
    }
    const ids = new Set(stored.map((row) => `${row.kind}:${row.id}`));
    const missing = writes.filter((write) => !ids.has(keyOf(write)));
    const already = again && missing.length > 0 ? await this.#recorded(missing) : new Set<string>();
    for (const write of writes) {
      const key = keyOf(write);
      if (ids.has(key) || already.has(key)) results.set(write, { stored: true });
      else results.set(write, { refused: await this.#duplicateOf(write) });
    }
  }

  /** Which of these writes' own ids are recorded (by an earlier attempt whose answer was lost). */
  async #recorded(writes: readonly LedgerWrite[]): Promise<Set<string>> {
    const ids = (kind: LedgerWrite["kind"]) =>
      writes.filter((w) => w.kind === kind).map((w) => keyOf(w).slice(2));
    const rows = await this.#read(
      `SELECT 'i' AS kind, invocation_id AS id FROM sciencegate_invocations WHERE invocation_id IN (SELECT jsonb_array_elements_text($1::jsonb))
       UNION ALL SELECT 'a', id FROM sciencegate_authorizations WHERE id IN (SELECT jsonb_array_elements_text($2::jsonb))`,
      [JSON.stringify(ids("invocation")), JSON.stringify(ids("authorization"))],
    );
    return new Set(rows.map((row) => `${row.kind}:${row.id}`));
  }

  /** The `DUPLICATE_ID` error of a refused write, naming the recorded row. */
  async #duplicateOf(write: LedgerWrite): Promise<GovernanceError> {
    if (write.kind === "authorization") {
      return duplicateError(`Authorization ${write.record.id} is already recorded.`);
    }
    const { invocationId, threadId, toolCallId } = write.record;
    if ((await this.get(invocationId)) !== undefined || threadId === undefined || toolCallId === undefined) {
      return duplicateError(`Invocation ${invocationId} is already recorded.`, invocationId);
    }
    const existing = (await this.findByCall(threadId, toolCallId))?.invocationId;
    return duplicateError(
      `Tool call ${toolCallId} of thread ${threadId} is already recorded as ${existing}.`,
      existing,
    );
  }

  /** Where the row `after` names sits in the ledger's order. */
  async #cursorOf(after: string): Promise<LedgerCursor> {
    const [row] = await this.#read(
      "SELECT started_ms, seq FROM sciencegate_invocations WHERE invocation_id = $1",
      [encodeLedgerText(after)],
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

  /** Runs a read, again on a fresh connection when the one it had was lost (reads change nothing). */
  async #read(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    this.#ensureOpen();
    for (let attempt = 1, pause = FIRST_READ_PAUSE_MS; ; attempt++, pause *= 2) {
      try {
        return await this.#db.query(sql, params);
      } catch (error) {
        // A read that ran out of time would only run out of time again.
        const retry = isTransientPostgresError(error) && (error as { code?: unknown }).code !== "57014";
        if (attempt >= READ_ATTEMPTS || !retry) throw storeError(this.#db.label, error);
        await this.#clock.sleep(pause);
      }
    }
  }

  /** The rows of a built statement, read as `#read` does. */
  #all({ sql, params }: LedgerStatement): Promise<Row[]> {
    return this.#read(sql, params);
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedLedgerError();
  }
}

/** `i:<id>` or `a:<id>`, the encoded id as the batch statement returns it. */
function keyOf(write: LedgerWrite): string {
  return write.kind === "invocation"
    ? `i:${encodeLedgerText(write.record.invocationId)}`
    : `a:${encodeLedgerText(write.record.id)}`;
}

/** SQLSTATE class 22 (data exception) or 54 (program limit): the statement's values, not the server. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("54"));
}

/** A failed statement: retryable when the connection or the server's state was at fault. */
function storeError(label: string, error: unknown): GovernanceError {
  if (error instanceof GovernanceError) return error;
  return new GovernanceError(
    "UPSTREAM_UNAVAILABLE",
    `The ledger in PostgreSQL ${label} failed: ${messageOf(error)}.`,
    {
      retryable: isTransientPostgresError(error),
      cause: error,
    },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
