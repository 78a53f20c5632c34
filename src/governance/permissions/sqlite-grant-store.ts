/**
 * The embedded grant store: SQLite through better-sqlite3 in WAL mode, loaded lazily inside `open()`
 * so that importing Sciencegate does not pay for the native addon.
 */
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { migrateSchema, openSqlite } from "../../core/index.js";
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

type Database = BetterSqlite3.Database;
type Row = Record<string, unknown>;

/** The grant database's file name inside the data directory. */
export const GRANTS_FILE = "grants.sqlite";

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE grants (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL,
     tool_definition_hash TEXT NOT NULL, created_at TEXT NOT NULL, created_ms INTEGER NOT NULL);
   CREATE UNIQUE INDEX grants_key ON grants (session_id, action, resource, tool_definition_hash);
   CREATE TABLE permission_epochs (session_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL);`,
  // A grant belongs to a principal too ('' for the single user): it covers that principal's calls only.
  `ALTER TABLE grants ADD COLUMN principal TEXT NOT NULL DEFAULT '';
   DROP INDEX grants_key;
   CREATE UNIQUE INDEX grants_key ON grants (session_id, principal, action, resource, tool_definition_hash);
   CREATE INDEX grants_principal ON grants (principal, created_ms);`,
];

/**
 * The path of the grant database of a data directory.
 * @param dataDir the data directory (see `resolveDataDir`)
 * @returns `<dataDir>/grants.sqlite`
 */
export function grantStorePath(dataDir: string): string {
  return join(dataDir, GRANTS_FILE);
}

/**
 * A `GrantStore` in one SQLite file, safe to open from several processes at once: a grant created
 * by one process is honoured by every other process on the same data directory.
 * @example
 * const grants = await SqliteGrantStore.open(grantStorePath(resolveDataDir()));
 */
export class SqliteGrantStore implements GrantStore {
  /** Absolute path of the database file, or `:memory:`. */
  readonly path: string;
  readonly #db: Database;
  /** Statements prepared once: compiling one costs about as much as running it. */
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  #closed = false;

  private constructor(db: Database, path: string) {
    this.#db = db;
    this.path = path;
  }

  /**
   * Opens (creating the file and its parent directories if needed) and migrates a grant store.
   * @param path a file path, or `":memory:"` for a private in-memory database
   * @returns the open store
   * @throws GovernanceError `INVALID_CONFIG` when the file was written by a newer schema version
   */
  static async open(path: string): Promise<SqliteGrantStore> {
    const opened = await openSqlite(path, migrate);
    return new SqliteGrantStore(opened.db, opened.path);
  }

  async ensure(grant: Grant): Promise<{ grant: Grant; created: boolean }> {
    const clean = normalizeGrant(grant);
    return this.#transaction(() => {
      const existing = this.#findRow(clean);
      if (existing) return { grant: grantFromRow(existing), created: false };
      // A grant bound to another definition of the tool can never match again: drop it.
      this.#statement(
        "DELETE FROM grants WHERE session_id = ? AND principal = ? AND action = ? AND resource = ?",
      ).run(clean.sessionId, principalColumn(clean), clean.action, clean.resource);
      this.#statement(
        `INSERT INTO grants (id, session_id, principal, action, resource, tool_definition_hash, created_at, created_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        clean.id,
        clean.sessionId,
        principalColumn(clean),
        clean.action,
        clean.resource,
        clean.toolDefinitionHash,
        clean.createdAt,
        Date.parse(clean.createdAt) || 0,
      );
      return { grant: clean, created: true };
    });
  }

  async find(key: GrantKey): Promise<Grant | undefined> {
    this.#ensureOpen();
    const row = this.#findRow(key);
    return row && grantFromRow(row);
  }

  async list(options: GrantListOptions = {}): Promise<Grant[]> {
    this.#ensureOpen();
    const filters = Object.entries({ session_id: options.sessionId, principal: options.principal }).filter(
      ([, value]) => value,
    );
    const where = filters.length === 0 ? "" : `WHERE ${filters.map(([name]) => `${name} = ?`).join(" AND ")}`;
    const rows = this.#statement(`SELECT * FROM grants ${where} ORDER BY created_ms, seq`).all(
      ...filters.map(([, value]) => value),
    );
    return (rows as Row[]).map(grantFromRow);
  }

  async revoke(id: string): Promise<Grant | undefined> {
    return this.#transaction(() => {
      const row = this.#statement("SELECT * FROM grants WHERE id = ?").get(id) as Row | undefined;
      if (row) this.#statement("DELETE FROM grants WHERE id = ?").run(id);
      return row && grantFromRow(row);
    });
  }

  async nextEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    const row = this.#statement(
      `INSERT INTO permission_epochs (session_id, epoch) VALUES (?, 1)
         ON CONFLICT (session_id) DO UPDATE SET epoch = epoch + 1 RETURNING epoch`,
    ).get(sessionId) as { epoch: number };
    return row.epoch;
  }

  async currentEpoch(sessionId: string): Promise<number> {
    this.#ensureOpen();
    const row = this.#statement("SELECT epoch FROM permission_epochs WHERE session_id = ?").get(sessionId) as
      | { epoch: number }
      | undefined;
    return row?.epoch ?? 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #findRow(key: GrantKey): Row | undefined {
    return this.#statement(
      "SELECT * FROM grants WHERE session_id = ? AND principal = ? AND action = ? AND resource = ? AND tool_definition_hash = ?",
    ).get(key.sessionId, principalColumn(key), key.action, key.resource, key.toolDefinitionHash) as
      | Row
      | undefined;
  }

  #statement(sql: string): BetterSqlite3.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #transaction<T>(body: () => T): T {
    this.#ensureOpen();
    // IMMEDIATE takes the write lock up front, so two processes cannot both miss and both insert.
    return this.#db.transaction(body).immediate();
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedGrantStoreError();
  }
}

function migrate(db: Database, path: string): void {
  migrateSchema(db, {
    versionTable: "grant_schema_version",
    label: "Grant store",
    path,
    migrations: MIGRATIONS,
  });
}
