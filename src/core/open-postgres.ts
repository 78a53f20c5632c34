/**
 * Opening PostgreSQL the same way everywhere (ledger, grants, download jobs, session state, rate
 * limits): one bounded `pg` pool per database URL, parameterised statements only, schema migrations
 * versioned per store and run once under a lock.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ClientConfig, Pool, PoolClient, QueryResultRow } from "pg";
import { GovernanceError } from "./errors.js";
import {
  type PostgresListener,
  type PostgresListenHandlers,
  type PostgresListenOptions,
  startPostgresListener,
} from "./postgres-listener.js";
import { redactUrl } from "./redact-url.js";

/** Options of `openPostgres`. */
export interface PostgresOptions {
  /** Connections at most in the pool. @default 10 */
  maxConnections?: number;
  /** How long to wait for a connection (new or from the pool), in ms. @default 10000 */
  connectionTimeoutMs?: number;
  /** Server-side bound of one statement, in ms (0 for none). @default 30000 */
  statementTimeoutMs?: number;
  /** `application_name` the server shows for these connections. @default "sciencegate" */
  applicationName?: string;
}

/** A value bound to a `$n` parameter. */
export type SqlValue = string | number | boolean | null | Buffer | Date | bigint;

/** Runs parameterised statements: on the pool, or on one connection inside a transaction. */
export interface SqlRunner {
  /**
   * Runs one statement.
   * @param sql text with `$1`, `$2`, … placeholders (never values spliced into the text)
   * @param params the values, in order
   * @param options `name`: prepare the statement once per connection under this name and run it
   *   prepared from then on (one name must always carry the same text); for a statement run on
   *   every call whose planning costs more than its execution
   * @returns the rows
   */
  query<Row extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params?: readonly SqlValue[],
    options?: { name?: string | undefined },
  ): Promise<Row[]>;
}

/** The driver's form of a statement: named (prepared once per connection) when a name is given. */
function statementOf(sql: string, params: readonly SqlValue[], name: string | undefined) {
  return name === undefined
    ? { text: sql, values: params as SqlValue[] }
    : { name, text: sql, values: params as SqlValue[] };
}

/**
 * An open PostgreSQL database: a bounded pool, statements, transactions. Stores that share one
 * database share one `PostgresDatabase`; whoever opened it closes it.
 * @example
 * const db = await openPostgres(process.env.SCIENCEGATE_DATABASE_URL!);
 * const rows = await db.query<{ n: number }>("SELECT $1::int AS n", [1]);
 * await db.close();
 */
export interface PostgresDatabase extends SqlRunner {
  /** The URL with its password and query values masked, for messages. */
  readonly label: string;
  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when
   * it throws (the error is rethrown).
   * @param work the statements, given a runner bound to the transaction's connection
   * @param options `serializable` for `ISOLATION LEVEL SERIALIZABLE` @default read committed
   */
  transaction<T>(work: (sql: SqlRunner) => Promise<T>, options?: { serializable?: boolean }): Promise<T>;
  /**
   * `LISTEN`s on a channel over a dedicated connection (outside the pool) that reconnects when it
   * drops; `onConnect` runs after every (re)connect so the caller can reload what it missed.
   * @param channel a lower-case identifier
   * @param handlers notification, (re)connect and error callbacks
   * @param options reconnect delay
   * @returns the listener, once listening; close it before the database
   * @throws GovernanceError `INVALID_INPUT` for a bad channel; whatever the first connect throws
   */
  listen(
    channel: string,
    handlers: PostgresListenHandlers,
    options?: PostgresListenOptions,
  ): Promise<PostgresListener>;
  /**
   * Runs statements from a caller that cannot wait (a process exit step): a short-lived child process
   * connects and runs them in one transaction, each in a savepoint of its own so that a refused one
   * does not undo the others. Blocks the event loop until they are done, at most `timeoutMs`.
   * @param statements the statements and their values
   * @param options the time bound @default 10000 ms
   * @returns how many statements failed and the first failure's message; `failed` counts every one
   *   when the child could not connect or commit, or ran out of time
   */
  runSync(
    statements: readonly { sql: string; params: readonly SqlValue[] }[],
    options?: { timeoutMs?: number },
  ): { failed: number; error?: string };
  /** Closes the pool; later statements fail. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens a pool to a PostgreSQL database and checks that it answers.
 * @param url a `postgres://` or `postgresql://` connection URL
 * @param options pool bound and timeouts
 * @returns the open database
 * @throws GovernanceError `INVALID_CONFIG` for a URL that is not a PostgreSQL URL,
 *   `UPSTREAM_UNAVAILABLE` (retryable) when the server cannot be reached or refuses the login
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresDatabase> {
  const label = redactUrl(url);
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `PostgreSQL URL ${label} must start with postgres:// or postgresql:// (e.g. postgres://user:password@host:5432/db).`,
      { data: { url: label } },
    );
  }
  // Loaded on first use: only apps that keep their state in PostgreSQL need the driver.
  const { default: pg } = await import("pg");
  const connection: ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: options.applicationName ?? "sciencegate",
  };
  // An idle connection does not keep the process alive (one in use does): a script that never closes
  // its runtime still exits once its work is done (see ARCHITECTURE.md, "State: who owns what").
  const pool: Pool = new pg.Pool({ ...connection, max: options.maxConnections ?? 10, allowExitOnIdle: true });
  // An idle connection the server drops (restart, failover) must not crash the process.
  pool.on("error", () => {});
  const db = new PoolDatabase(pool, label, connection, (channel, handlers, listenOptions) =>
    startPostgresListener(pg.Client, { ...connection, keepAlive: true }, channel, handlers, listenOptions),
  );
  try {
    await db.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => {});
    throw new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `PostgreSQL ${label} cannot be reached: ${messageOf(error)}. Check the URL, the server and its credentials.`,
      { retryable: true, data: { url: label }, cause: error },
    );
  }
  return db;
}

class PoolDatabase implements PostgresDatabase {
  readonly #pool: Pool;
  readonly label: string;
  readonly #connection: ClientConfig;
  readonly listen: PostgresDatabase["listen"];
  #closed: Promise<void> | undefined;

  constructor(pool: Pool, label: string, connection: ClientConfig, listen: PostgresDatabase["listen"]) {
    this.#pool = pool;
    this.label = label;
    this.#connection = connection;
    this.listen = listen;
  }

  runSync(
    statements: readonly { sql: string; params: readonly SqlValue[] }[],
    options: { timeoutMs?: number } = {},
  ): { failed: number; error?: string } {
    if (statements.length === 0) return { failed: 0 };
    const input = JSON.stringify({
      connection: this.#connection,
      statements: statements.map(({ sql, params }) => ({ sql, params: params.map(encodeSyncValue) })),
    });
    const child = spawnSync(process.execPath, [syncWriterPath()], {
      input,
      timeout: options.timeoutMs ?? 10_000,
      encoding: "utf8",
      maxBuffer: 1024 * 1024,
      // The URL (with its password) travels on stdin, never in the arguments others can list.
      stdio: ["pipe", "pipe", "pipe"],
    });
    if (child.status === 0) {
      try {
        return JSON.parse(child.stdout) as { failed: number; error?: string };
      } catch {
        // Fall through: an answer we cannot read counts as nothing written.
      }
    }
    const why = child.error?.message ?? (child.stderr.trim() || `exit ${child.status ?? child.signal}`);
    return { failed: statements.length, error: why };
  }

  async query<Row extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: readonly SqlValue[] = [],
    options: { name?: string | undefined } = {},
  ): Promise<Row[]> {
    for (let attempt = 1; ; attempt++) {
      if (this.#closed !== undefined) throw closedDatabaseError(this.label);
      try {
        const result = await this.#pool.query<Row>(statementOf(sql, params, options.name));
        return result.rows;
      } catch (error) {
        // The server ended the session before the statement committed: it never ran, whatever it was.
        if (attempt >= TERMINATED_ATTEMPTS || !isSessionTerminated(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
      }
    }
  }

  async transaction<T>(work: (sql: SqlRunner) => Promise<T>, options: { serializable?: boolean } = {}) {
    if (this.#closed !== undefined) throw closedDatabaseError(this.label);
    const client: PoolClient = await this.#pool.connect();
    let broken = false;
    try {
      await client.query(options.serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN");
      const runner: SqlRunner = {
        query: async <Row extends QueryResultRow>(
          sql: string,
          params: readonly SqlValue[] = [],
          options: { name?: string | undefined } = {},
        ) => (await client.query<Row>(statementOf(sql, params, options.name))).rows,
      };
      const value = await work(runner);
      await client.query("COMMIT");
      return value;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      // A connection whose rollback failed is dropped rather than handed to the next caller.
      client.release(broken);
    }
  }

  close(): Promise<void> {
    this.#closed ??= this.#pool.end();
    return this.#closed;
  }
}

/** How often one statement is sent when the server keeps ending the session it was sent on. */
const TERMINATED_ATTEMPTS = 4;

/**
 * The server answered the statement by ending its session (57P01 an administrator's
 * `pg_terminate_backend` or a shutdown, 57P02 a crash of another backend, 57P03 not accepting yet): the
 * transaction was aborted, so a single statement in its own transaction did not commit and may be sent
 * again on a fresh connection. A socket that merely closed says nothing of the kind.
 */
function isSessionTerminated(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "57P01" || code === "57P02" || code === "57P03";
}

/** Node socket errors after which the same statement may succeed on a new connection. */
const TRANSIENT_SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
/**
 * SQLSTATEs after which the same statement may succeed later: a connection exception (08), the server
 * shutting down or restarting the session (57P01–57P03), too many connections (53300), a cancelled
 * statement (57014), a serialization failure or deadlock (40001, 40P01).
 */
const TRANSIENT_SQLSTATES = /^(08...|57P0[1-3]|53300|57014|40001|40P01)$/;

/**
 * Whether a failed statement may succeed if it is sent again, on a fresh connection: the connection
 * was lost or refused, the server was shutting down, busy or chose the statement as a deadlock victim.
 * A statement the server may have committed before the connection dropped must be safe to repeat.
 * @param error what a statement threw
 * @returns `true` for a transient failure; `false` for anything about the statement itself, and after
 *   `close()`
 */
export function isTransientPostgresError(error: unknown): boolean {
  if (error instanceof GovernanceError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return TRANSIENT_SQLSTATES.test(code) || TRANSIENT_SOCKET_CODES.has(code);
  // The driver's own errors for a socket that closed or never opened carry no code.
  const message = error instanceof Error ? error.message : "";
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    message,
  );
}

function closedDatabaseError(label: string): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", `PostgreSQL ${label} is closed.`, {
    data: { url: label },
  });
}

/** A statement value as JSON for `postgres-sync-writer.cjs`. */
function encodeSyncValue(value: SqlValue): unknown {
  if (Buffer.isBuffer(value)) return { $bytes: value.toString("base64") };
  if (typeof value === "bigint") return { $bigint: value.toString() };
  return value;
}

/** `postgres-sync-writer.cjs`, next to this module in the sources and in the package. */
function syncWriterPath(): string {
  return fileURLToPath(new URL("./postgres-sync-writer.cjs", import.meta.url));
}

/** Every Sciencegate store's schema version, one row per store, in one table of the database. */
const VERSION_TABLE = "sciencegate_schema_versions";
/** The advisory lock that serializes migrations of every store, across processes. */
const MIGRATION_LOCK = "sciencegate:schema";

/**
 * Brings a store's schema to the newest version, once across all processes: in one transaction that
 * holds an advisory lock, runs the migrations after the recorded version and records the new one. A
 * second process waits for the lock, then finds nothing to do.
 * @param db the open database
 * @param schema the store's name (its row in the version table, and the name in messages) and its
 *   migrations (each one SQL script; their count is the schema version)
 * @throws GovernanceError `INVALID_CONFIG` when the database has a newer schema than this code knows
 */
export async function migratePostgresSchema(
  db: PostgresDatabase,
  schema: { store: string; migrations: readonly string[] },
): Promise<void> {
  const { store, migrations } = schema;
  await db.transaction(async (sql) => {
    await sql.query("SELECT pg_advisory_xact_lock(hashtext($1))", [MIGRATION_LOCK]);
    await sql.query(
      `CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (store TEXT PRIMARY KEY, version INTEGER NOT NULL)`,
    );
    const [row] = await sql.query<{ version: number }>(
      `SELECT version FROM ${VERSION_TABLE} WHERE store = $1`,
      [store],
    );
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `The ${store} schema in PostgreSQL ${db.label} is version ${current}, newer than this Sciencegate supports (${migrations.length}); upgrade Sciencegate on every replica, or use another database.`,
        { data: { store, version: current, supported: migrations.length, url: db.label } },
      );
    }
    for (const step of migrations.slice(current)) await sql.query(step);
    await sql.query(
      `INSERT INTO ${VERSION_TABLE} (store, version) VALUES ($1, $2)
       ON CONFLICT (store) DO UPDATE SET version = EXCLUDED.version`,
      [store, migrations.length],
    );
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
