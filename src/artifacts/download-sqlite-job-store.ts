/**
 * Download jobs in their own SQLite file (`<dataDir>/jobs.sqlite`, WAL), so the ledger schema stays
 * untouched. better-sqlite3 is loaded lazily inside `open()` to keep the core import cheap.
 */
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { GovernanceError, openSqlite } from "../core/index.js";
import {
  closedJobStoreError,
  type DownloadJob,
  type DownloadJobFilter,
  type DownloadJobStore,
  type DownloadJobUpdateOptions,
  unknownJob,
} from "./download-job-store.js";

/** File name of the job database inside the data directory. */
export const DOWNLOAD_JOBS_FILE = "jobs.sqlite";

/**
 * The default job database path.
 * @param dataDir the data directory
 * @returns `<dataDir>/jobs.sqlite`
 */
export function downloadJobsPath(dataDir: string): string {
  return join(dataDir, DOWNLOAD_JOBS_FILE);
}

/** A `DownloadJobStore` over SQLite; each job is one row holding its JSON. */
export class SqliteDownloadJobStore implements DownloadJobStore {
  readonly #db: BetterSqlite3.Database;
  #closed = false;

  private constructor(db: BetterSqlite3.Database) {
    this.#db = db;
  }

  /**
   * Opens (and creates or migrates) the job database.
   * @param path the file, or `:memory:`
   * @returns the store
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the file cannot be opened
   */
  static async open(path: string): Promise<SqliteDownloadJobStore> {
    try {
      const { db } = await openSqlite(path, (db) =>
        db.exec(
          `CREATE TABLE IF NOT EXISTS download_jobs (
             seq INTEGER PRIMARY KEY AUTOINCREMENT,
             job_id TEXT NOT NULL UNIQUE,
             status TEXT NOT NULL,
             body TEXT NOT NULL);
           CREATE INDEX IF NOT EXISTS download_jobs_invocation
             ON download_jobs (json_extract(body, '$.mcpInvocationId'))`,
        ),
      );
      return new SqliteDownloadJobStore(db);
    } catch (cause) {
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", `Cannot open the job database ${path}.`, { cause });
    }
  }

  /** @inheritdoc */
  async create(job: DownloadJob): Promise<void> {
    this.#open();
    try {
      this.#db
        .prepare("INSERT INTO download_jobs (job_id, status, body) VALUES (?, ?, ?)")
        .run(job.jobId, job.status, JSON.stringify(job));
    } catch (cause) {
      // Only a key clash is a duplicate; a full disk or an I/O error is the store failing.
      const code = (cause as { code?: unknown }).code;
      if (typeof code !== "string" || !code.startsWith("SQLITE_CONSTRAINT")) {
        throw new GovernanceError(
          "UPSTREAM_UNAVAILABLE",
          `Could not store job ${job.jobId}: ${String(cause)}`,
          {
            retryable: true,
            cause,
          },
        );
      }
      throw new GovernanceError("DUPLICATE_ID", `Job ${job.jobId} already exists.`, { cause });
    }
  }

  /** @inheritdoc */
  async update(job: DownloadJob, options: DownloadJobUpdateOptions = {}): Promise<boolean> {
    this.#open();
    const { ifStatus } = options;
    // One statement: SQLite holds the write lock from the status check to the write, so another
    // connection's write to the same file cannot fall between them.
    const info =
      ifStatus === undefined
        ? this.#db
            .prepare("UPDATE download_jobs SET status = ?, body = ? WHERE job_id = ?")
            .run(job.status, JSON.stringify(job), job.jobId)
        : this.#db
            .prepare(
              "UPDATE download_jobs SET status = ?, body = ? WHERE job_id = ? AND status IN (SELECT value FROM json_each(?))",
            )
            .run(job.status, JSON.stringify(job), job.jobId, JSON.stringify(ifStatus));
    if (info.changes > 0) return true;
    if (
      ifStatus !== undefined &&
      this.#db.prepare("SELECT 1 FROM download_jobs WHERE job_id = ?").get(job.jobId)
    )
      return false;
    throw unknownJob(job.jobId);
  }

  /** @inheritdoc */
  async get(jobId: string): Promise<DownloadJob | undefined> {
    this.#open();
    const row = this.#db.prepare("SELECT body FROM download_jobs WHERE job_id = ?").get(jobId) as
      | { body: string }
      | undefined;
    return row === undefined ? undefined : (JSON.parse(row.body) as DownloadJob);
  }

  /** @inheritdoc */
  async list(filter: DownloadJobFilter = {}): Promise<DownloadJob[]> {
    this.#open();
    // Oldest first by the job's own `createdAt`, ties in insertion order (the port's contract).
    const order = "ORDER BY json_extract(body, '$.createdAt'), seq";
    const rows = (
      filter.mcpInvocationId === undefined
        ? this.#db.prepare(`SELECT body FROM download_jobs ${order}`).all()
        : this.#db
            .prepare(
              `SELECT body FROM download_jobs WHERE json_extract(body, '$.mcpInvocationId') = ? ${order}`,
            )
            .all(filter.mcpInvocationId)
    ) as { body: string }[];
    return rows.map((row) => JSON.parse(row.body) as DownloadJob);
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #open(): void {
    if (this.#closed) throw closedJobStoreError();
  }
}
