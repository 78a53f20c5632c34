/**
 * The tables of `PostgresLedger` and how a record maps to their columns (see `postgres-ledger.ts`).
 */
import type { AuthorizationRecord, InvocationRecord } from "./ledger.js";
import { column } from "./ledger-query-sql.js";

/** A row as `pg` returns it. */
export type Row = Record<string, unknown>;

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
export const LEDGER_MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_invocations (
     seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     invocation_id TEXT NOT NULL UNIQUE,
     session_id TEXT NOT NULL, thread_id TEXT, tool_call_id TEXT, run_id TEXT,
     source_id TEXT NOT NULL, tool_id TEXT NOT NULL, mcp_tool_name TEXT,
     status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
     started_at TEXT NOT NULL, started_ms BIGINT NOT NULL, finished_at TEXT NOT NULL,
     duration_ms DOUBLE PRECISION NOT NULL, attempts BIGINT NOT NULL, cache_hit BOOLEAN NOT NULL,
     queue_wait_ms DOUBLE PRECISION NOT NULL,
     request_ref TEXT, raw_ref TEXT, normalized_ref TEXT, authorization_id TEXT, license TEXT,
     catalog_revision TEXT, tool_definition_hash TEXT, input_hash TEXT, error JSONB);
   CREATE UNIQUE INDEX sciencegate_invocations_call ON sciencegate_invocations (thread_id, tool_call_id)
     WHERE thread_id IS NOT NULL AND tool_call_id IS NOT NULL;
   CREATE INDEX sciencegate_invocations_session ON sciencegate_invocations (session_id, started_ms);
   CREATE INDEX sciencegate_invocations_thread ON sciencegate_invocations (thread_id, started_ms);
   CREATE INDEX sciencegate_invocations_tool ON sciencegate_invocations (source_id, tool_id, started_ms);
   CREATE TABLE sciencegate_authorizations (
     seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, thread_id TEXT, tool_call_id TEXT,
     source_id TEXT NOT NULL, tool_id TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL,
     decision_source TEXT NOT NULL, created_at TEXT NOT NULL, created_ms BIGINT NOT NULL, epoch BIGINT NOT NULL);
   CREATE INDEX sciencegate_authorizations_session ON sciencegate_authorizations (session_id, created_ms);
   CREATE TABLE sciencegate_ledger_objects (
     sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),
     size INTEGER NOT NULL, bytes BYTEA NOT NULL CHECK (octet_length(bytes) = size));`,
  // Browsing: pages in the ledger's order, alone or by source, with what counts by source and outcome
  // need (index-only scans); the authorizations newest first.
  `CREATE INDEX sciencegate_invocations_started ON sciencegate_invocations (started_ms, seq)
     INCLUDE (source_id, status);
   CREATE INDEX sciencegate_invocations_source ON sciencegate_invocations (source_id, started_ms, seq)
     INCLUDE (status);
   CREATE INDEX sciencegate_invocations_tool_only ON sciencegate_invocations (tool_id, started_ms, seq);
   CREATE INDEX sciencegate_authorizations_created ON sciencegate_authorizations (created_ms, seq);`,
];

const INVOCATION_FIELDS = `invocationId sessionId threadId toolCallId runId sourceId toolId mcpToolName status
  startedAt finishedAt durationMs attempts queueWaitMs requestRef rawRef normalizedRef authorizationId license
  catalogRevision toolDefinitionHash inputHash`.split(/\s+/) as (keyof InvocationRecord)[];
const AUTHORIZATION_FIELDS = `id sessionId threadId toolCallId sourceId toolId action resource decisionSource
  createdAt epoch`.split(/\s+/) as (keyof AuthorizationRecord)[];
/** Columns whose values come back as text (BIGINT) and are numbers in a record. */
const NUMERIC_FIELDS = new Set<string>(["attempts", "epoch"]);
const NUMERIC_TYPES: Record<string, string> = {
  durationMs: "DOUBLE PRECISION",
  queueWaitMs: "DOUBLE PRECISION",
  attempts: "BIGINT",
  epoch: "BIGINT",
};

/**
 * One insert of a whole batch: the rows travel as one JSON array, so a batch costs one statement
 * whatever its size, and `ON CONFLICT DO NOTHING` refuses a duplicate row without aborting the others.
 */
function batchInsertSql(
  table: string,
  fields: readonly string[],
  extra: Record<string, string>,
  key: string,
) {
  const typed = [
    "ord INTEGER",
    ...fields.map((f) => `${column(f)} ${NUMERIC_TYPES[f] ?? "TEXT"}`),
    ...Object.entries(extra).map(([name, type]) => `${name} ${type}`),
  ];
  const columns = [...fields.map(column), ...Object.keys(extra)];
  return `INSERT INTO ${table} (${columns.join(", ")})
    SELECT ${columns.join(", ")} FROM jsonb_to_recordset($1::jsonb) AS r(${typed.join(", ")}) ORDER BY ord
    ON CONFLICT DO NOTHING RETURNING ${key}`;
}

export const INSERT_INVOCATIONS = batchInsertSql(
  "sciencegate_invocations",
  INVOCATION_FIELDS,
  { cache_hit: "BOOLEAN", started_ms: "BIGINT", error: "JSONB" },
  "invocation_id",
);
export const INSERT_AUTHORIZATIONS = batchInsertSql(
  "sciencegate_authorizations",
  AUTHORIZATION_FIELDS,
  { created_ms: "BIGINT" },
  "id",
);

/**
 * The JSON of one invocation row in a batch insert.
 * @param record the normalized record
 * @param ord its place in the batch
 */
export function invocationRow(record: InvocationRecord, ord: number): Row {
  return {
    ...columnsOf(record as unknown as Row, INVOCATION_FIELDS),
    ord,
    cache_hit: record.cacheHit,
    started_ms: Date.parse(record.startedAt),
    error: record.error ?? null,
  };
}

/**
 * The JSON of one authorization row in a batch insert.
 * @param record the normalized record
 * @param ord its place in the batch
 */
export function authorizationRow(record: AuthorizationRecord, ord: number): Row {
  return {
    ...columnsOf(record as unknown as Row, AUTHORIZATION_FIELDS),
    ord,
    created_ms: Date.parse(record.createdAt),
  };
}

/** An authorization as stored, back as a record. */
export function toAuthorization(row: Row): AuthorizationRecord {
  return fromColumns<AuthorizationRecord>(row, AUTHORIZATION_FIELDS);
}

function columnsOf(record: Row, fields: readonly string[]): Row {
  const out: Row = {};
  for (const field of fields) out[column(field)] = record[field] ?? null;
  return out;
}

function fromColumns<T>(row: Row, fields: readonly string[]): T {
  const out: Row = {};
  for (const field of fields) {
    const value = row[column(field)];
    if (value !== null && value !== undefined) out[field] = NUMERIC_FIELDS.has(field) ? Number(value) : value;
  }
  return out as T;
}

/** An invocation as stored, back as a record. */
export function toInvocation(row: Row): InvocationRecord {
  const record = fromColumns<InvocationRecord>(row, INVOCATION_FIELDS);
  record.cacheHit = row.cache_hit === true;
  if (row.error !== null && row.error !== undefined)
    record.error = row.error as InvocationRecord["error"] & {};
  return record;
}
