/**
 * Quota counts in PostgreSQL, shared by every replica on the database: a principal's calls count once
 * whichever replica runs them (see ARCHITECTURE.md, "State: who owns what").
 */
import { GovernanceError, migratePostgresSchema, type PostgresDatabase } from "../../core/index.js";
import type { QuotaCounter } from "./quota-limiter.js";
import type { QuotaWindow } from "./quota-rules.js";

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_quota_windows (
     key TEXT NOT NULL, window_start BIGINT NOT NULL, window_end BIGINT NOT NULL, calls INTEGER NOT NULL,
     PRIMARY KEY (key, window_start));
   CREATE INDEX sciencegate_quota_windows_end ON sciencegate_quota_windows (window_end);`,
];

/**
 * Makes the call's rows, then locks and reads them: a conflicting insert updates the row to itself,
 * which takes its lock, so a second caller of the same windows waits here until the first commits.
 * Keys are locked in one order, so two callers never wait for each other.
 */
const LOCK = `INSERT INTO sciencegate_quota_windows (key, window_start, window_end, calls)
  SELECT w.key, w.start, w.finish, 0 FROM jsonb_to_recordset($1::jsonb) AS w(key TEXT, start BIGINT, finish BIGINT)
  ORDER BY w.key
  ON CONFLICT (key, window_start) DO UPDATE SET calls = sciencegate_quota_windows.calls
  RETURNING key, calls`;

const COUNT = `UPDATE sciencegate_quota_windows q SET calls = q.calls + 1
  FROM jsonb_to_recordset($1::jsonb) AS w(key TEXT, start BIGINT)
  WHERE q.key = w.key AND q.window_start = w.start`;

const PURGE = "DELETE FROM sciencegate_quota_windows WHERE window_end < $1";
const PURGE_INTERVAL_MS = 10 * 60_000;

/**
 * A `QuotaCounter` every replica on one PostgreSQL database shares: one transaction per call locks the
 * call's window rows, reads them and counts the call in all of them or in none. When the database
 * cannot be reached the call is refused (`UPSTREAM_UNAVAILABLE`, retryable): a quota never lets
 * calls through uncounted. Windows that ended are deleted now and then. It does not close the database.
 * @example
 * const quotas = new QuotaLimiter({ rules, counter: await PostgresQuotaCounter.open(db) });
 */
export class PostgresQuotaCounter implements QuotaCounter {
  readonly #db: PostgresDatabase;
  #lastPurge = Number.NEGATIVE_INFINITY;
  #closed = false;

  private constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Migrates the table (once across replicas) and returns the counter.
   * @param db the open database (stays the caller's to close, after this counter)
   * @returns the counter
   * @throws GovernanceError `INVALID_CONFIG` when the database has a newer schema
   */
  static async open(db: PostgresDatabase): Promise<PostgresQuotaCounter> {
    await migratePostgresSchema(db, { store: "quotas", migrations: MIGRATIONS });
    return new PostgresQuotaCounter(db);
  }

  async take(windows: readonly QuotaWindow[], now: number): Promise<number> {
    if (this.#closed) throw new GovernanceError("UPSTREAM_UNAVAILABLE", "The quota counter is closed.");
    const rows = JSON.stringify(windows.map((w) => ({ key: w.key, start: w.start, finish: w.end })));
    let full: number;
    try {
      full = await this.#db.transaction(async (sql) => {
        const counted = await sql.query<{ key: string; calls: number }>(LOCK, [rows]);
        const calls = new Map(counted.map((row) => [row.key, Number(row.calls)]));
        const index = windows.findIndex((w) => (calls.get(w.key) ?? 0) >= w.limit);
        if (index < 0) await sql.query(COUNT, [rows]);
        return index;
      });
    } catch (error) {
      throw new GovernanceError(
        "UPSTREAM_UNAVAILABLE",
        "The quota counts in PostgreSQL could not be updated.",
        {
          retryable: true,
          cause: error,
        },
      );
    }
    if (now - this.#lastPurge >= PURGE_INTERVAL_MS) {
      this.#lastPurge = now;
      // Best effort, off the call's path: a failed purge leaves old rows that no window reads again.
      void this.#db.query(PURGE, [now]).catch(() => undefined);
    }
    return full;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
