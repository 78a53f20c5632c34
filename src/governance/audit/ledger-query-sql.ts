/**
 * The statements of a ledger query in the SQL ledgers (`SqliteLedger`, `PostgresLedger`): both tables
 * have the same columns, so only how a dialect spells parameters, JSON and case-insensitive LIKE
 * differs.
 */
import type { LedgerCursor, NormalizedLedgerQuery } from "./ledger-query.js";

/** A value bound to a SQL parameter. */
export type BindValue = string | number | boolean;

/** A statement and its parameters in order. */
export interface LedgerStatement {
  sql: string;
  params: BindValue[];
}

/** How one SQL dialect spells what the statements need. */
export interface LedgerSqlDialect {
  /** The invocations table. */
  table: string;
  /** Adds a parameter; returns its placeholder (`?` or `$n`). */
  bind(params: BindValue[], value: BindValue): string;
  /** Expressions of the error's code and message. */
  errorCode: string;
  errorMessage: string;
  /** The stored value of `cache_hit`. */
  cacheHit(value: boolean): BindValue;
  /** A condition: the column contains the LIKE pattern (ASCII letters lowered), in either case. */
  contains(column: string, pattern: string): string;
}

/** The columns `text` searches, besides the error's code and message. */
const TEXT_COLUMNS = [
  "invocation_id",
  "session_id",
  "principal",
  "thread_id",
  "tool_call_id",
  "source_id",
  "tool_id",
];

/**
 * The column of a record field in both SQL ledgers: the field in snake_case.
 * @param field e.g. `sessionId`
 * @returns e.g. `session_id`
 */
export function column(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/**
 * The WHERE clause of a query.
 * @param query the normalized query
 * @param dialect how the database spells it
 * @param params the statement's parameters so far; the clause's are added
 * @param cursor the `after` row's place, to keep only rows after it in the query's order
 * @returns the clause: empty, or starting with `WHERE`
 */
function whereOf(
  query: NormalizedLedgerQuery,
  dialect: LedgerSqlDialect,
  params: BindValue[],
  cursor?: LedgerCursor,
): string {
  const bind = (value: BindValue) => dialect.bind(params, value);
  const conditions = Object.entries(query.equal).map(([field, value]) => `${column(field)} = ${bind(value)}`);
  if (query.errorCode !== undefined) conditions.push(`${dialect.errorCode} = ${bind(query.errorCode)}`);
  if (query.cacheHit !== undefined) conditions.push(`cache_hit = ${bind(dialect.cacheHit(query.cacheHit))}`);
  if (query.startedFromMs !== undefined) conditions.push(`started_ms >= ${bind(query.startedFromMs)}`);
  if (query.startedBeforeMs !== undefined) conditions.push(`started_ms < ${bind(query.startedBeforeMs)}`);
  if (query.text !== undefined) {
    const pattern = `%${query.text.replace(/[\\%_]/g, "\\$&")}%`;
    const contains = (columns: string[]) =>
      columns.map((c) => dialect.contains(c, bind(pattern))).join(" OR ");
    // Most rows have no error: skipping its JSON saves a tenth of a scan. (Placeholders bind in order.)
    const inIds = contains(TEXT_COLUMNS);
    const inError = contains([dialect.errorCode, dialect.errorMessage]);
    conditions.push(`(${inIds} OR (error IS NOT NULL AND (${inError})))`);
  }
  if (cursor !== undefined) {
    // A range on started_ms (usable by every index that ends in it), then the ties by sequence.
    const [bound, strictly] = query.order === "asc" ? [">=", ">"] : ["<=", "<"];
    conditions.push(
      `started_ms ${bound} ${bind(cursor.startedMs)}`,
      `(started_ms ${strictly} ${bind(cursor.startedMs)} OR seq ${strictly} ${bind(cursor.seq)})`,
    );
  }
  return conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
}

/**
 * The page of `Ledger.query`: matching rows in the ledger's order (start, then sequence), limited.
 * @param query the normalized query
 * @param dialect how the database spells it
 * @param cursor where the `after` row sits, when the query has one
 */
export function pageStatement(
  query: NormalizedLedgerQuery,
  dialect: LedgerSqlDialect,
  cursor: LedgerCursor | undefined,
): LedgerStatement {
  const params: BindValue[] = [];
  const where = whereOf(query, dialect, params, cursor);
  const direction = query.order === "desc" ? "DESC" : "ASC";
  const limit = query.limit === undefined ? "" : `LIMIT ${dialect.bind(params, query.limit)}`;
  const sql = `SELECT * FROM ${dialect.table} ${where} ORDER BY started_ms ${direction}, seq ${direction} ${limit}`;
  return { sql, params };
}

/**
 * The count of `Ledger.count`, as the column `n`.
 * @param query the normalized query (its order, limit and cursor are not used)
 * @param dialect how the database spells it
 */
export function countStatement(query: NormalizedLedgerQuery, dialect: LedgerSqlDialect): LedgerStatement {
  const params: BindValue[] = [];
  const where = whereOf(query, dialect, params);
  return { sql: `SELECT COUNT(*) AS n FROM ${dialect.table} ${where}`, params };
}

/**
 * The grouped counts of `Ledger.activity`: columns `bucket`, `source_id`, `status`, `n`.
 * @param query the normalized query with its bucket width
 * @param dialect how the database spells it
 */
export function activityStatement(
  query: NormalizedLedgerQuery & { bucketMs: number },
  dialect: LedgerSqlDialect,
): LedgerStatement {
  const params: BindValue[] = [];
  const width = () => `CAST(${dialect.bind(params, query.bucketMs)} AS BIGINT)`;
  // The floor of started_ms to its bucket, also before 1970 (% truncates toward zero in both databases).
  const bucket = `started_ms - ((started_ms % ${width()}) + ${width()}) % ${width()}`;
  const where = whereOf(query, dialect, params);
  return {
    sql: `SELECT ${bucket} AS bucket, source_id, status, COUNT(*) AS n FROM ${dialect.table} ${where}
      GROUP BY 1, 2, 3`,
    params,
  };
}

/**
 * The first and last start of the ledger, as `firstMs` and `lastMs` (NULL when empty): two subqueries,
 * so that each is one step along the start index.
 * @param dialect how the database spells it
 */
export function spanStatement(dialect: LedgerSqlDialect): LedgerStatement {
  const { table } = dialect;
  return {
    sql: `SELECT (SELECT MIN(started_ms) FROM ${table}) AS "firstMs", (SELECT MAX(started_ms) FROM ${table}) AS "lastMs"`,
    params: [],
  };
}
