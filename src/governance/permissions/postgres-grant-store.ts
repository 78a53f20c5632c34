/**
 * Session grants and permission epochs in PostgreSQL, shared by every replica that opens the same
 * database (see ARCHITECTURE.md, "State: who owns what").
 */
import { migratePostgresSchema, type PostgresDatabase } from "../../core/index.js";
import {
  closedGrantStoreError,
  type Grant,
  type GrantKey,
  type GrantListOptions,
  type GrantStore,
  grantFromRow,
  normalizeGrant,
  principalColumn,
} from "./grant-store.js";

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_grants (
     seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL,
     tool_definition_hash TEXT NOT NULL, created_at TEXT NOT NULL, created_ms BIGINT NOT NULL);
   CREATE UNIQUE INDEX sciencegate_grants_key
     ON sciencegate_grants (session_id, action, resource, tool_definition_hash);
   CREATE TABLE sciencegate_permission_epochs (session_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL);`,
  // A grant belongs to a principal too ('' for the single user): it covers that principal's calls only.
  `ALTER TABLE sciencegate_grants ADD COLUMN principal TEXT NOT NULL DEFAULT '';
   DROP INDEX sciencegate_grants_key;
   CREATE UNIQUE INDEX sciencegate_grants_key
     ON sciencegate_grants (session_id, principal, action, resource, tool_definition_hash);
   CREATE INDEX sciencegate_grants_principal ON sciencegate_grants (principal, created_ms, seq);`,
];

/** Options of `PostgresGrantStore.open`. */
export interface PostgresGrantStoreOptions {
  /**
   * The authorization rows that carry the epochs go to a `PostgresLedger` on the same database. Then
   * an epoch's increment commits without waiting for its own log flush: the row that carries the epoch
   * commits after it, and that commit's flush covers the increment (a crash before it loses both, so
   * no number is handed out twice). Leave it off when the ledger is elsewhere. @default false
   */
  epochsCommitWithLedger?: boolean;
}

const FIND = `SELECT * FROM sciencegate_grants
  WHERE session_id = $1 AND principal = $2 AND action = $3 AND resource = $4 AND tool_definition_hash = $5`;

const NEXT_EPOCH = `INSERT INTO sciencegate_permission_epochs (session_id, epoch) VALUES ($1, 1)
  ON CONFLICT (session_id) DO UPDATE SET epoch = sciencegate_permission_epochs.epoch + 1 RETURNING epoch`;

/** `NEXT_EPOCH` without the wait for the log flush at commit (the statement's own transaction only). */
const NEXT_EPOCH_QUICK = `WITH quick AS (SELECT set_config('synchronous_commit', 'off', true))
  INSERT INTO sciencegate_permission_epochs (session_id, epoch) SELECT $1, 1 FROM quick
  ON CONFLICT (session_id) DO UPDATE SET epoch = sciencegate_permission_epochs.epoch + 1 RETURNING epoch`;

/**
 * A `GrantStore` in PostgreSQL: a grant one replica creates is honoured by every other, and epochs
 * count up atomically across replicas. The store does not own the database: whoever opened it closes it.
 * @example
 * const db = await openPostgres(process.env.SCIENCEGATE_DATABASE_URL!);
 * const grants = await PostgresGrantStore.open(db);
 */
export class PostgresGrantStore implements GrantStore {
  readonly #db: PostgresDatabase;
  readonly #nextEpochSql: string;
  #closed = false;

  private constructor(db: PostgresDatabase, options: PostgresGrantStoreOptions) {
    this.#db = db;
    this.#nextEpochSql = options.epochsCommitWithLedger ? NEXT_EPOCH_QUICK : NEXT_EPOCH;
  }

  /**
   * Migrates the grant tables (once across replicas) and returns the store.
   * @param db the open database (see `openPostgres`)
   * @param options how epochs commit
   * @returns the store
   * @throws GovernanceError `INVALID_CONFIG` when the database has a newer grant schema
   */
  static async open(
    db: PostgresDatabase,
    options: PostgresGrantStoreOptions = {},
  ): Promise<PostgresGrantStore> {
    await migratePostgresSchema(db, { store: "grants", migrations: MIGRATIONS });
    return new PostgresGrantStore(db, options);
  }

  async ensure(grant: Grant): Promise<{ grant: Grant; created: boolean }> {
    this.#ensureOpen();
    const clean = normalizeGrant(grant);
    const principal = principalColumn(clean);
    const key = [clean.sessionId, principal, clean.action, clean.resource, clean.toolDefinitionHash];
    return this.#db.transaction(async (sql) => {
      // One transaction per (session, principal, action, resource) at a time, across replicas: two
      // callers cannot both miss, and a stale definition's grant is dropped exactly once.
      await sql.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `sciencegate:grant:${JSON.stringify([clean.sessionId, principal, clean.action, clean.resource])}`,
      ]);
      const [existing] = await sql.query(FIND, key);
      if (existing) return { grant: grantFromRow(existing), created: false };
      // A grant bound to another definition of the tool can never match again: drop it.
      await sql.query(
        "DELETE FROM sciencegate_grants WHERE session_id = $1 AND principal = $2 AND action = $3 AND resource = $4",
        [clean.sessionId, principal, clean.action, clean.resource],
      );
      await sql.query(
        `INSERT INTO sciencegate_grants (id, session_id, principal, action, resource, tool_definition_hash, created_at, created_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [clean.id, ...key, clean.createdAt, Date.parse(clean.createdAt) || 0],
      );
      return { grant: clean, created: true };
    });
  }

  async find(key: GrantKey): Promise<Grant | undefined> {
    this.#ensureOpen();
    const [row] = await this.#db.query(FIND, [
      key.sessionId,
      principalColumn(key),
      key.action,
      key.resource,
      key.toolDefinitionHash,
    ]);
    return row && grantFromRow(row);
  }

  async list(options: GrantListOptions = {}): Promise<Grant[]> {
    this.#ensureOpen();
    const filters = Object.entries({ session_id: options.sessionId, principal: options.principal }).filter(
      ([, value]) => value,
    );
    const where =
      filters.length === 0 ? "" : `WHERE ${filters.map(([name], i) => `${name} = $${i + 1}`).join(" AND ")}`;
    const rows = await this.#db.query(
      `SELECT * FROM sciencegate_grants ${where} ORDER BY created_ms, seq`,
      filters.map(([, value]) => value as string),
    );
    return rows.map(grantFromRow);
  }

  async revoke(id: string): Promise<Grant | undefined> {
    this.#ensureOpen();
    const [row] = await this.#db.query("DELETE FROM sciencegate_grants WHERE id = $1 RETURNING *", [id]);
    return row && grantFromRow(row);
  }

  async nextEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    const [row] = await this.#db.query<{ epoch: string }>(this.#nextEpochSql, [sessionId]);
    return Number(row?.epoch);
  }

  async currentEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    const [row] = await this.#db.query<{ epoch: string }>(
      "SELECT epoch FROM sciencegate_permission_epochs WHERE session_id = $1",
      [sessionId],
    );
    return row === undefined ? 0 : Number(row.epoch);
  }

  /** Refuses every later call. The database stays open. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedGrantStoreError();
  }
}
