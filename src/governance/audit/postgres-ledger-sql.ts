/**
 * The tables of `PostgresLedger` and how a record maps to their columns (see `postgres-ledger.ts`):
 * every text goes through the ledger's reversible encoding (`ledger-text.ts`), since PostgreSQL refuses
 * a NUL character in `text` and `jsonb`.
 */
import type { SqlValue } from "../../core/index.js";
import type { AuthorizationRecord, InvocationRecord, LedgerWrite } from "./ledger.js";
import { column } from "./ledger-query-sql.js";
import { decodeLedgerText, encodeLedgerText, reencodeStoredText } from "./ledger-text.js";

/** A row as `pg` returns it. */
export type Row = Record<string, unknown>;

/** The text columns of each table (and `error`, re-encoded through its JSON text). */
const INVOCATION_TEXT_COLUMNS = `invocation_id session_id thread_id tool_call_id run_id source_id tool_id
  mcp_tool_name status started_at finished_at request_ref raw_ref normalized_ref authorization_id license
  catalog_revision tool_definition_hash input_hash`.split(/\s+/);
const AUTHORIZATION_TEXT_COLUMNS = `id session_id thread_id tool_call_id source_id tool_id action resource
  decision_source created_at`.split(/\s+/);
/** How PostgreSQL spells the re-encoding of U+FFFF (see `reencodeStoredText`). */
const POSTGRES_REENCODE = {
  replace: (c: string) => `replace(${c}, U&'\\FFFF', U&'\\FFFF\\E001')`,
  contains: (c: string) => `strpos(${c}, U&'\\FFFF') > 0`,
};

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
  // Text is stored through one reversible encoding (`ledger-text.ts`): a U+FFFF written before it
  // existed is escaped, so that it reads back as itself.
  `${reencodeStoredText("sciencegate_invocations", INVOCATION_TEXT_COLUMNS, POSTGRES_REENCODE)}
   UPDATE sciencegate_invocations SET error = ${POSTGRES_REENCODE.replace("error::text")}::jsonb
     WHERE ${POSTGRES_REENCODE.contains("error::text")};
   ${reencodeStoredText("sciencegate_authorizations", AUTHORIZATION_TEXT_COLUMNS, POSTGRES_REENCODE)}`,
  // Who each call and authorization was for (absent on rows of a single-user setup), and the console's
  // filter by it.
  `ALTER TABLE sciencegate_invocations ADD COLUMN principal TEXT;
   ALTER TABLE sciencegate_authorizations ADD COLUMN principal TEXT;
   CREATE INDEX sciencegate_invocations_principal ON sciencegate_invocations (principal, started_ms, seq)
     WHERE principal IS NOT NULL;
   CREATE INDEX sciencegate_authorizations_principal ON sciencegate_authorizations (principal, created_ms, seq)
     WHERE principal IS NOT NULL;`,
];

const INVOCATION_FIELDS =
  `invocationId sessionId principal threadId toolCallId runId sourceId toolId mcpToolName status
  startedAt finishedAt durationMs attempts queueWaitMs requestRef rawRef normalizedRef authorizationId license
  catalogRevision toolDefinitionHash inputHash`.split(/\s+/) as (keyof InvocationRecord)[];
const AUTHORIZATION_FIELDS =
  `id sessionId principal threadId toolCallId sourceId toolId action resource decisionSource
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
 * The `INSERT … SELECT` of one table from a JSON array of rows (`$n::jsonb`): a batch costs one
 * statement whatever its size, and `ON CONFLICT DO NOTHING` skips a duplicate without aborting the rest.
 */
function insertFromJson(
  table: string,
  fields: readonly string[],
  extra: Record<string, string>,
  key: string,
  param: string,
): string {
  const typed = [
    "ord INTEGER",
    ...fields.map((f) => `${column(f)} ${NUMERIC_TYPES[f] ?? "TEXT"}`),
    ...Object.entries(extra).map(([name, type]) => `${name} ${type}`),
  ];
  const columns = [...fields.map(column), ...Object.keys(extra)];
  return `INSERT INTO ${table} (${columns.join(", ")})
    SELECT ${columns.join(", ")} FROM jsonb_to_recordset(${param}::jsonb) AS r(${typed.join(", ")}) ORDER BY ord
    ON CONFLICT DO NOTHING RETURNING ${key}`;
}

const INSERT_INVOCATIONS = insertFromJson(
  "sciencegate_invocations",
  INVOCATION_FIELDS,
  { cache_hit: "BOOLEAN", started_ms: "BIGINT", error: "JSONB" },
  "invocation_id",
  "$1",
);
const INSERT_AUTHORIZATIONS = insertFromJson(
  "sciencegate_authorizations",
  AUTHORIZATION_FIELDS,
  { created_ms: "BIGINT" },
  "id",
  "$2",
);

/** Each record field with its column, named once (not per row). */
const INVOCATION_COLUMN_PAIRS = INVOCATION_FIELDS.map((field) => [field, column(field)] as const);
const AUTHORIZATION_COLUMN_PAIRS = AUTHORIZATION_FIELDS.map((field) => [field, column(field)] as const);

/** The batch statement's text for a number of objects: it depends on nothing else. */
const batchTexts = new Map<number, string>();

function batchText(objectCount: number): string {
  const known = batchTexts.get(objectCount);
  if (known !== undefined) return known;
  // Objects take three parameters each, after the two JSON arrays.
  const objectRows = Array.from({ length: objectCount }, (_, i) => {
    const n = 3 + 3 * i;
    return `($${n}::text, $${n + 1}::text, $${n + 2}::bytea)`;
  });
  const objects =
    objectCount === 0
      ? ""
      : `, objects AS (INSERT INTO sciencegate_ledger_objects (sha256, size, bytes)
           SELECT o.sha256, octet_length(o.bytes), o.bytes
           FROM (VALUES ${objectRows.join(", ")}) AS o(owner, sha256, bytes)
           WHERE o.owner IN (SELECT 'i:' || invocation_id FROM invocations UNION ALL SELECT 'a:' || id FROM authorizations)
           ON CONFLICT (sha256) DO NOTHING)`;
  const sql = `WITH invocations AS (${INSERT_INVOCATIONS}),
      authorizations AS (${INSERT_AUTHORIZATIONS})${objects}
    SELECT 'i' AS kind, invocation_id AS id FROM invocations
    UNION ALL SELECT 'a' AS kind, id FROM authorizations`;
  // Kept for the counts that run prepared; a larger batch is rare and its text is built again.
  if (objectCount <= MAX_PREPARED_OBJECTS) batchTexts.set(objectCount, sql);
  return sql;
}

/**
 * The one statement of a batch: its invocation rows, its authorization rows and, for the rows
 * stored, their objects, all in one commit. Its rows are `{ kind: "i" | "a", id }` (encoded ids)
 * of what it stored; a write whose id is missing was a duplicate. The batch must not repeat an id.
 * @param writes the batch
 * @returns the statement, its values, and its name for a prepared statement (`undefined`: unnamed)
 */
export function insertBatchStatement(writes: readonly LedgerWrite[]): {
  sql: string;
  params: SqlValue[];
  name: string | undefined;
} {
  const invocations: Row[] = [];
  const authorizations: Row[] = [];
  const params: SqlValue[] = ["", ""];
  let objectCount = 0;
  writes.forEach((write, ord) => {
    let owner: string;
    if (write.kind === "authorization") {
      authorizations.push(authorizationRow(write.record, ord));
      owner = `a:${encodeLedgerText(write.record.id)}`;
    } else {
      invocations.push(invocationRow(write.record, ord));
      owner = `i:${encodeLedgerText(write.record.invocationId)}`;
    }
    for (const object of write.objects ?? []) {
      objectCount++;
      params.push(owner, object.sha256, toBuffer(object.bytes));
    }
  });
  params[0] = JSON.stringify(invocations);
  params[1] = JSON.stringify(authorizations);
  // The text depends only on the number of objects: prepared per connection under a name for it (its
  // planning took longer than its execution), up to a bound, so that a connection keeps few.
  const name = objectCount <= MAX_PREPARED_OBJECTS ? `sciencegate_ledger_batch_${objectCount}` : undefined;
  return { sql: batchText(objectCount), params, name };
}

/** The most objects a batch statement may carry and still run prepared (a name per count). */
const MAX_PREPARED_OBJECTS = 16;

/** The JSON of one invocation row in a batch insert, its texts encoded. */
function invocationRow(record: InvocationRecord, ord: number): Row {
  const { error } = record;
  return {
    ...columnsOf(record as unknown as Row, INVOCATION_COLUMN_PAIRS),
    ord,
    cache_hit: record.cacheHit,
    started_ms: Date.parse(record.startedAt),
    error:
      error === undefined
        ? null
        : { ...error, code: encodeLedgerText(error.code), message: encodeLedgerText(error.message) },
  };
}

/** The JSON of one authorization row in a batch insert, its texts encoded. */
function authorizationRow(record: AuthorizationRecord, ord: number): Row {
  return {
    ...columnsOf(record as unknown as Row, AUTHORIZATION_COLUMN_PAIRS),
    ord,
    created_ms: Date.parse(record.createdAt),
  };
}

/** An authorization as stored, back as a record. */
export function toAuthorization(row: Row): AuthorizationRecord {
  return fromColumns<AuthorizationRecord>(row, AUTHORIZATION_COLUMN_PAIRS);
}

function columnsOf(record: Row, pairs: readonly (readonly [string, string])[]): Row {
  const out: Row = {};
  for (const [field, name] of pairs) {
    const value = record[field];
    out[name] = typeof value === "string" ? encodeLedgerText(value) : (value ?? null);
  }
  return out;
}

function fromColumns<T>(row: Row, pairs: readonly (readonly [string, string])[]): T {
  const out: Row = {};
  for (const [field, name] of pairs) {
    const value = row[name];
    if (value === null || value === undefined) continue;
    if (NUMERIC_FIELDS.has(field)) out[field] = Number(value);
    else out[field] = typeof value === "string" ? decodeLedgerText(value) : value;
  }
  return out as T;
}

/** An invocation as stored, back as a record. */
export function toInvocation(row: Row): InvocationRecord {
  const record = fromColumns<InvocationRecord>(row, INVOCATION_COLUMN_PAIRS);
  record.cacheHit = row.cache_hit === true;
  if (row.error !== null && row.error !== undefined) {
    const error = row.error as NonNullable<InvocationRecord["error"]>;
    record.error = { ...error, code: decodeLedgerText(error.code), message: decodeLedgerText(error.message) };
  }
  return record;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
