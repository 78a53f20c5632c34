/**
 * The SQLite ledger's batch commit and its checkpointer thread (both in `sqlite-ledger-commit.cjs`). A WAL checkpoint
 * copies the log into the database file and syncs both: milliseconds, tens on a slow disk. Run by
 * SQLite's automatic checkpoint it would stall whichever commit crossed the threshold, and the event
 * loop with it; here a thread runs it, once enough rows have been committed, while commits go on.
 *
 * The log starts over at the first commit after a checkpoint that reached its end, that is one that no
 * commit overlapped. When commits pause, a checkpoint runs in the pause and reaches the end by itself.
 * Under commits that never pause the log grows; once it is past a bound the next checkpoint holds
 * commits back (`busy`, then `onIdle`) so that it reaches the end. A call waits for a checkpoint only
 * then, once the log has grown to that bound, never in bursts with pauses between.
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

/**
 * Frames in the log past which the next checkpoint holds commits back: 64 MiB of 4 KiB pages. Below it
 * checkpoints overlap commits, and a call never waits for one. The file keeps its largest size and is
 * written over from its start; cutting it back (`journal_size_limit`) would stall the commit that starts
 * the log over, on the event loop, for tens of ms.
 */
const HOLD_AT_LOG_FRAMES = 16_384;

/** A pause in commits this long (ms) runs a checkpoint, which then reaches the end of the log. */
const IDLE_CHECKPOINT_MS = 25;

/** Runs a ledger file's WAL checkpoints in a thread of its own. */
export class LedgerCheckpointer {
  readonly #db: BetterSqlite3.Database;
  readonly #worker: Worker;
  readonly #onIdle: () => void;
  readonly #exited: Promise<void>;
  #ready = false;
  /** A checkpoint is running. */
  #running = false;
  /** The running checkpoint holds commits back. */
  #busy = false;
  /** The last checkpoint found the log past its bound: the next one holds commits back. */
  #holdNext = false;
  #closed = false;
  /** Rows committed since the last checkpoint started. */
  #sinceLast = 0;
  #checkpoints = 0;
  #held = 0;
  /** Runs a checkpoint once commits have paused; refreshed by each commit. */
  readonly #idle: NodeJS.Timeout;

  /**
   * @param db the writing connection: its automatic checkpoint is turned off once the thread is ready,
   *   and back on if the thread ends early
   * @param path the database file
   * @param onIdle called when a checkpoint has ended, so that held commits go
   */
  constructor(db: BetterSqlite3.Database, path: string, onIdle: () => void) {
    this.#db = db;
    this.#onIdle = onIdle;
    this.#idle = setTimeout(() => this.#start(), IDLE_CHECKPOINT_MS);
    this.#idle.unref();
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

  /** Whether a running checkpoint holds commits back (the ledger holds them until `onIdle`). */
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

  /** Checkpoints that held commits back (the log had grown past its bound). */
  get held(): number {
    return this.#held;
  }

  /**
   * Counts committed rows; asks for a checkpoint once enough have gone by and none is running, and
   * otherwise once commits pause.
   * @param rows rows the commit stored
   */
  committed(rows: number): void {
    this.#sinceLast += rows;
    if (this.#sinceLast >= CHECKPOINT_EVERY_ROWS) this.#start();
    if (this.#sinceLast > 0) this.#idle.refresh();
  }

  /** Starts a checkpoint unless one is running or nothing was committed since the last one. */
  #start(): void {
    if (!this.#ready || this.#closed || this.#running || this.#sinceLast === 0) return;
    this.#running = true;
    this.#busy = this.#holdNext;
    if (this.#busy) this.#held++;
    this.#sinceLast = 0;
    // The thread keeps the process alive while a checkpoint runs: a caller awaiting a held commit with
    // nothing else pending would otherwise see the process end.
    this.#worker.ref();
    this.#worker.postMessage("checkpoint");
  }

  /** Lets a running checkpoint finish, then ends the thread and its connection. Idempotent. */
  async close(): Promise<void> {
    clearTimeout(this.#idle);
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
    const result = message as { ok?: boolean; log?: number };
    if (result.ok) this.#checkpoints++;
    // The log's length in frames when the checkpoint ran.
    this.#holdNext = result.ok === true && (result.log ?? 0) >= HOLD_AT_LOG_FRAMES;
    const held = this.#busy;
    this.#running = false;
    this.#busy = false;
    this.#worker.unref();
    if (held) this.#onIdle();
    // Rows committed while it ran are in the log still: a pause checkpoints them too.
    if (this.#sinceLast > 0) this.#idle.refresh();
  }

  /** The thread ended: SQLite's automatic checkpoint takes over again, and held commits go. */
  #stop(): void {
    const wasReady = this.#ready;
    const wasBusy = this.#busy;
    clearTimeout(this.#idle);
    this.#ready = false;
    this.#running = false;
    this.#busy = false;
    if (wasReady && this.#db.open) this.#db.pragma("wal_autocheckpoint = 1000");
    if (wasBusy) this.#onIdle();
  }
}
