/**
 * Download jobs in PostgreSQL, shared by every replica that opens the same database: a replica that
 * resumes a graph finds the job another replica started (see ARCHITECTURE.md, "State: who owns what").
 */
import { GovernanceError, migratePostgresSchema, type PostgresDatabase } from "../core/index.js";
import {
  closedJobStoreError,
  type DownloadJob,
  type DownloadJobFilter,
  type DownloadJobStore,
  type DownloadJobUpdateOptions,
  unknownJob,
} from "./download-job-store.js";

/** Schema steps; step `i` takes the schema from version `i` to `i + 1`. Only ever append. */
const MIGRATIONS: readonly string[] = [
  // The body is JSON kept as text, not JSONB: JSONB refuses the escaped NUL that a text field may hold.
  `CREATE TABLE sciencegate_download_jobs (
     seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     job_id TEXT NOT NULL UNIQUE,
     status TEXT NOT NULL,
     created_at DOUBLE PRECISION NOT NULL,
     body TEXT NOT NULL);
   CREATE INDEX sciencegate_download_jobs_created ON sciencegate_download_jobs (created_at, seq);`,
  // The invocation a job's candidate came from, as a column, for `list({ mcpInvocationId })`.
  `ALTER TABLE sciencegate_download_jobs ADD COLUMN mcp_invocation_id TEXT;
   UPDATE sciencegate_download_jobs SET mcp_invocation_id = body::json ->> 'mcpInvocationId';
   CREATE INDEX sciencegate_download_jobs_invocation
     ON sciencegate_download_jobs (mcp_invocation_id, created_at, seq);`,
];

/**
 * A `DownloadJobStore` in PostgreSQL; each job is one row holding its JSON. The store does not own
 * the database: whoever opened it closes it.
 * @example
 * const db = await openPostgres(process.env.SCIENCEGATE_DATABASE_URL!);
 * const jobs = await PostgresDownloadJobStore.open(db);
 */
export class PostgresDownloadJobStore implements DownloadJobStore {
  readonly #db: PostgresDatabase;
  #closed = false;

  private constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Migrates the job table (once across replicas) and returns the store.
   * @param db the open database (see `openPostgres`)
   * @returns the store
   * @throws GovernanceError `INVALID_CONFIG` when the database has a newer job schema
   */
  static async open(db: PostgresDatabase): Promise<PostgresDownloadJobStore> {
    await migratePostgresSchema(db, { store: "download_jobs", migrations: MIGRATIONS });
    return new PostgresDownloadJobStore(db);
  }

  /** @inheritdoc */
  async create(job: DownloadJob): Promise<void> {
    this.#open();
    const rows = await this.#run(`Could not store job ${job.jobId}`, () =>
      this.#db.query(
        `INSERT INTO sciencegate_download_jobs (job_id, status, created_at, mcp_invocation_id, body)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id) DO NOTHING RETURNING job_id`,
        [job.jobId, job.status, job.createdAt, job.mcpInvocationId, JSON.stringify(job)],
      ),
    );
    if (rows.length === 0) throw new GovernanceError("DUPLICATE_ID", `Job ${job.jobId} already exists.`);
  }

  /** @inheritdoc */
  async update(job: DownloadJob, options: DownloadJobUpdateOptions = {}): Promise<boolean> {
    this.#open();
    const { ifStatus } = options;
    // `created_at` stays: a job keeps its place in the list. The status check is the UPDATE's own
    // condition, which PostgreSQL re-checks on the newest row version after waiting for its lock.
    const rows = await this.#run(`Could not update job ${job.jobId}`, () =>
      ifStatus === undefined
        ? this.#db.query(
            `UPDATE sciencegate_download_jobs SET status = $1, body = $2, mcp_invocation_id = $4
             WHERE job_id = $3 RETURNING job_id`,
            [job.status, JSON.stringify(job), job.jobId, job.mcpInvocationId],
          )
        : this.#db.query(
            `UPDATE sciencegate_download_jobs SET status = $1, body = $2, mcp_invocation_id = $5
             WHERE job_id = $3 AND status IN (SELECT json_array_elements_text($4::json)) RETURNING job_id`,
            [job.status, JSON.stringify(job), job.jobId, JSON.stringify(ifStatus), job.mcpInvocationId],
          ),
    );
    if (rows.length > 0) return true;
    if (ifStatus !== undefined) {
      const known = await this.#run(`Could not read job ${job.jobId}`, () =>
        this.#db.query("SELECT 1 FROM sciencegate_download_jobs WHERE job_id = $1", [job.jobId]),
      );
      if (known.length > 0) return false;
    }
    throw unknownJob(job.jobId);
  }

  /** @inheritdoc */
  async get(jobId: string): Promise<DownloadJob | undefined> {
    this.#open();
    const [row] = await this.#run(`Could not read job ${jobId}`, () =>
      this.#db.query<{ body: string }>("SELECT body FROM sciencegate_download_jobs WHERE job_id = $1", [
        jobId,
      ]),
    );
    return row === undefined ? undefined : (JSON.parse(row.body) as DownloadJob);
  }

  /** @inheritdoc */
  async list(filter: DownloadJobFilter = {}): Promise<DownloadJob[]> {
    this.#open();
    const { mcpInvocationId } = filter;
    const rows = await this.#run("Could not list jobs", () =>
      mcpInvocationId === undefined
        ? this.#db.query<{ body: string }>(
            "SELECT body FROM sciencegate_download_jobs ORDER BY created_at, seq",
          )
        : this.#db.query<{ body: string }>(
            `SELECT body FROM sciencegate_download_jobs WHERE mcp_invocation_id = $1
             ORDER BY created_at, seq`,
            [mcpInvocationId],
          ),
    );
    return rows.map((row) => JSON.parse(row.body) as DownloadJob);
  }

  /** Refuses every later call. The database stays open. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Runs a statement; a failure of the database is `UPSTREAM_UNAVAILABLE` (retryable). */
  async #run<T>(what: string, statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      throw new GovernanceError(
        "UPSTREAM_UNAVAILABLE",
        `${what} in PostgreSQL ${this.#db.label}: ${message}`,
        {
          retryable: true,
          cause,
        },
      );
    }
  }

  #open(): void {
    if (this.#closed) throw closedJobStoreError();
  }
}
