/**
 * The SQLite ledger's batch commit and its checkpointer thread (both in `sqlite-ledger-commit.cjs`). A WAL checkpoint
 * copies the log into the database file and syncs both: milliseconds, tens on a slow disk. Run by
 * SQLite's automatic checkpoint it would stall whichever commit crossed the threshold, and the event
 * loop with it; here a thread runs it, once enough rows have been committed, while the ledger holds its
 * commits back (`busy`, then `onIdle`), so that the checkpoint reaches the end of the log and the next
 * commit starts the log over instead of letting it grow.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

/** One write, as data: what a commit applies (values encoded, in column order). */
export type SqliteWriteOp =
  | {
      kind: "invocation";
      invocationId: string;
      threadId: string | undefined;
      toolCallId: string | undefined;
      values: unknown[];
      objects: readonly { sha256: string; size: number; bytes: Uint8Array }[];
    }
  | {
      kind: "authorization";
      id: string;
      values: unknown[];
      objects: readonly { sha256: string; size: number; bytes: Uint8Array }[];
    };

/** What applying one write found. */
export type SqliteWriteResult =
  | { stored: true }
  | { duplicate: "invocation" | "call" | "authorization"; existingInvocationId?: string }
  | { failed: string; code?: string };

/** The batch commit of one connection (`createWriter` in sqlite-ledger-commit.cjs). */
export interface SqliteCommitter {
  /** Applies a batch in one transaction; throws when the transaction itself fails (nothing stored). */
  commit(ops: readonly SqliteWriteOp[]): SqliteWriteResult[];
  /** The same, for writes that may be stored already: a write whose own key is recorded counts as stored. */
  commitAgain(ops: readonly SqliteWriteOp[]): SqliteWriteResult[];
}

const require = createRequire(import.meta.url);
/** The commit's file, resolved on first use (importing the package touches no file). */
const entry = () => require.resolve("./sqlite-ledger-commit.cjs");

/**
 * The batch commit of a connection.
 * @param db the connection
 * @param sql the statements it prepares
 * @returns the committer
 */
export function createSqliteCommitter(
  db: BetterSqlite3.Database,
  sql: Record<string, string>,
): SqliteCommitter {
  const { createWriter } = require(entry()) as {
    createWriter(db: BetterSqlite3.Database, sql: Record<string, string>): SqliteCommitter;
  };
  return createWriter(db, sql);
}

/** Rows committed between two checkpoints: a ledger row dirties about ten pages, SQLite's own threshold is 1,000. */
const CHECKPOINT_EVERY_ROWS = 64;

/** Runs a ledger file's WAL checkpoints in a thread of its own. */
export class LedgerCheckpointer {
  readonly #db: BetterSqlite3.Database;
  readonly #worker: Worker;
  readonly #onIdle: () => void;
  readonly #exited: Promise<void>;
  #ready = false;
  #busy = false;
  #closed = false;
  #sinceLast = 0;
  #checkpoints = 0;

  /**
   * @param db the writing connection: its automatic checkpoint is turned off once the thread is ready,
   *   and back on if the thread ends early
   * @param path the database file
   * @param onIdle called when a checkpoint has ended, so that held commits go
   */
  constructor(db: BetterSqlite3.Database, path: string, onIdle: () => void) {
    this.#db = db;
    this.#onIdle = onIdle;
    const module = require.resolve("better-sqlite3");
    this.#worker = new Worker(entry(), { workerData: { ledgerCheckpointer: true, module, path } });
    this.#worker.on("message", (message: unknown) => this.#onMessage(message));
    // An error is followed by exit, handled there.
    this.#worker.on("error", () => undefined);
    this.#exited = new Promise((resolve) => {
      this.#worker.once("exit", () => {
        this.#stop();
        resolve();
      });
    });
    // The thread keeps the process alive only while a checkpoint runs. After the listeners: adding a
    // "message" listener refs the worker's port again, so an earlier unref would be undone.
    this.#worker.unref();
  }

  /** Whether a checkpoint is running (the ledger holds its commits until `onIdle`). */
  get busy(): boolean {
    return this.#busy;
  }

  /** Whether checkpoints run in the thread (false before it is ready and after it ended). */
  get active(): boolean {
    return this.#ready;
  }

  /** Checkpoints the thread has completed. */
  get checkpoints(): number {
    return this.#checkpoints;
  }

  /**
   * Counts committed rows; asks for a checkpoint once enough have gone by and none is running.
   * @param rows rows the commit stored
   */
  committed(rows: number): void {
    this.#sinceLast += rows;
    if (!this.#ready || this.#busy || this.#sinceLast < CHECKPOINT_EVERY_ROWS) return;
    this.#busy = true;
    this.#sinceLast = 0;
    // While a checkpoint runs the ledger holds its commits for it: the thread keeps the process alive
    // until then, or a caller awaiting a held commit with nothing else pending would see the process end.
    this.#worker.ref();
    this.#worker.postMessage("checkpoint");
  }

  /** Lets a running checkpoint finish, then ends the thread and its connection. Idempotent. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#worker.postMessage("close");
    }
    const timer = setTimeout(() => void this.#worker.terminate(), 5_000);
    await this.#exited;
    clearTimeout(timer);
  }

  #onMessage(message: unknown): void {
    if (message === "ready") {
      if (this.#closed || !this.#db.open) return;
      this.#db.pragma("wal_autocheckpoint = 0");
      this.#ready = true;
      return;
    }
    if ((message as { ok?: boolean }).ok) this.#checkpoints++;
    this.#busy = false;
    this.#worker.unref();
    this.#onIdle();
  }

  /** The thread ended: SQLite's automatic checkpoint takes over again, and held commits go. */
  #stop(): void {
    const wasReady = this.#ready;
    const wasBusy = this.#busy;
    this.#ready = false;
    this.#busy = false;
    if (wasReady && this.#db.open) this.#db.pragma("wal_autocheckpoint = 1000");
    if (wasBusy) this.#onIdle();
  }
}
