/**
 * The one writer of the ledger: every invocation and authorization row of a process goes through one
 * queue into one `LedgerStore` (see ARCHITECTURE.md, "Record"). An append settles only once its row is
 * durable; rows appended while a commit runs share the next one (group commit), so concurrent calls
 * share commits and a lone call pays one.
 */
import { atExit, type Clock, GovernanceError, isGovernanceError, systemClock } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import type {
  AuthorizationRecord,
  InvocationRecord,
  LedgerReader,
  LedgerStore,
  LedgerWrite,
  LedgerWriteResult,
} from "./ledger.js";
import {
  checkInlineObjects,
  closedLedgerError,
  normalizeAuthorizationRecord,
  normalizeInvocationRecord,
} from "./ledger-record.js";
import type { LedgerSpool } from "./ledger-spool.js";

/** Writes per commit at most, so that one statement or transaction stays bounded. */
const MAX_BATCH_WRITES = 256;
/** Inline object bytes per commit at most (a larger single write still goes, alone). */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
/** The first pause before a failed commit is tried again; it doubles up to `MAX_RETRY_PAUSE_MS`. */
const FIRST_RETRY_PAUSE_MS = 20;
const MAX_RETRY_PAUSE_MS = 1_000;
/** Pauses between attempts to replay the spool while the store stays unreachable. */
const FIRST_REPLAY_PAUSE_MS = 1_000;
const MAX_REPLAY_PAUSE_MS = 30_000;

/** Options of `LedgerWriter`. */
export interface LedgerWriterOptions {
  /**
   * Where a batch goes when the store cannot commit it within `retryWithinMs`: written and synced on
   * the local disk, then replayed into the store once it answers. Without one, such a batch's appends
   * reject (`UPSTREAM_UNAVAILABLE`). @default none
   */
  spool?: LedgerSpool | undefined;
  /**
   * How long a commit that failed with a retryable error (a dropped connection, a busy database) is
   * tried again, on a fresh connection, before its batch goes to the spool. @default 10000
   */
  retryWithinMs?: number | undefined;
  /** Times the pauses between attempts. @default systemClock */
  clock?: Clock | undefined;
  /** Where the writer says that rows wait in the spool or were lost. @default a line on stderr */
  warn?: ((line: string) => void) | undefined;
}

/** An authorization row the writer holds until the row of the call it allows is appended (see `hold`). */
export interface HeldAuthorization {
  /**
   * Queues the held row now, ahead of any row appended after this call, so that it shares that row's
   * commit. Only the first call queues it; every call returns the same promise.
   * @returns once the row is durable
   */
  release(): Promise<void>;
}

interface Held {
  write: LedgerWrite;
  committed?: Promise<void>;
}

interface Pending {
  write: LedgerWrite;
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The one writer of a ledger store: validates each row, queues it, commits the queue in batches, one
 * after another in append order, retries a failed commit idempotently, spools what still cannot be
 * committed, and at process exit commits what is left synchronously. Give every part of a runtime the
 * same writer: the broker's rows, the permission service's authorization rows and the download rows
 * then share commits and their order.
 * @example
 * const store = await SqliteLedger.open(join(dataDir, "ledger.sqlite"));
 * const ledger = new LedgerWriter(store, { spool: new LedgerSpool(join(dataDir, "ledger-spool")) });
 * await ledger.append(row); // durable now
 * await ledger.close();
 * await store.close();
 */
export class LedgerWriter {
  /** The store's reads. */
  readonly reader: LedgerReader;
  /** The largest object `append` takes inline, or `undefined` when the store keeps none. */
  readonly maxInlineBytes: number | undefined;
  readonly #store: LedgerStore;
  readonly #spool: LedgerSpool | undefined;
  readonly #retryWithinMs: number;
  readonly #clock: Clock;
  readonly #warn: (line: string) => void;
  #queue: Pending[] = [];
  /** Rows `hold` keeps until they are released (or the writer closes, or the process exits). */
  readonly #held = new Set<Held>();
  /** The batch whose commit runs (for the exit step). */
  #inFlight: readonly Pending[] = [];
  /** The running commit, if any: batches commit one after another, in append order. */
  #committing: Promise<void> | undefined;
  #scheduled = false;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Set once a batch went to the spool, until the store takes a commit again: no retries meanwhile. */
  #outage = false;
  #replaying: Promise<number> | undefined;
  #replayTimer: ReturnType<typeof setTimeout> | undefined;
  #replayPauseMs = FIRST_REPLAY_PAUSE_MS;
  readonly #stopAtExit: () => void;

  /**
   * @param store where rows go; the writer does not close it
   * @param options spool, retry bound, clock and warnings
   * @throws GovernanceError `INVALID_CONFIG` for a `retryWithinMs` that is not a non-negative number
   */
  constructor(store: LedgerStore, options: LedgerWriterOptions = {}) {
    const retryWithinMs = options.retryWithinMs ?? 10_000;
    if (!(Number.isFinite(retryWithinMs) && retryWithinMs >= 0)) {
      throw new GovernanceError(
        "INVALID_CONFIG",
        `LedgerWriter retryWithinMs must be a non-negative number of ms; got ${String(retryWithinMs)}.`,
      );
    }
    this.#store = store;
    this.reader = store;
    this.maxInlineBytes = store.objects?.maxInlineBytes;
    this.#spool = options.spool;
    this.#retryWithinMs = retryWithinMs;
    this.#clock = options.clock ?? systemClock;
    this.#warn = options.warn ?? ((line) => process.stderr.write(`${line}\n`));
    this.#stopAtExit = atExit(() => this.#commitAtExit());
    // Batches an earlier process (or this one, before a restart) spooled go in as soon as they can.
    if (this.#spool !== undefined && this.#spool.list().length > 0) this.#scheduleReplay(0);
  }

  /**
   * Appends one invocation row; with `objects`, also the content it references, in the same commit.
   * @param record the row
   * @param objects content the row references, each at most `maxInlineBytes`
   * @returns once the row is durable: committed, or synced to the spool when the store stayed unreachable
   * @throws GovernanceError `INVALID_INPUT` for a malformed record or objects the store cannot take;
   *   `DUPLICATE_ID` when the `invocationId`, or the `threadId`+`toolCallId` pair, is already recorded
   *   (`data.existingInvocationId`); `UPSTREAM_UNAVAILABLE` after `close()`, or when the row could be
   *   neither committed nor spooled
   */
  append(record: InvocationRecord, objects: readonly ContentObject[] = []): Promise<void> {
    try {
      this.#ensureOpen();
      const clean = normalizeInvocationRecord(record);
      checkInlineObjects(objects, this.maxInlineBytes);
      const bytes = objects.reduce((sum, object) => sum + object.size, 0);
      return this.#enqueue({ kind: "invocation", record: clean, objects }, bytes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Appends one authorization row; with `objects`, also the content its `resource` names, in the same
   * commit (so that every replica of a shared ledger reads it).
   * @param record the row
   * @param objects content the row references, each at most `maxInlineBytes`
   * @returns once the row is durable
   * @throws GovernanceError `INVALID_INPUT` for a malformed record or objects the store cannot take;
   *   `DUPLICATE_ID` for a known `id`; `UPSTREAM_UNAVAILABLE` after `close()`, or when the row could be
   *   neither committed nor spooled
   */
  appendAuthorization(record: AuthorizationRecord, objects: readonly ContentObject[] = []): Promise<void> {
    try {
      this.#ensureOpen();
      const clean = normalizeAuthorizationRecord(record);
      checkInlineObjects(objects, this.maxInlineBytes);
      const bytes = objects.reduce((sum, object) => sum + object.size, 0);
      return this.#enqueue({ kind: "authorization", record: clean, objects }, bytes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Takes an authorization row now and writes it later, with the row of the call it allows: one
   * commit for both instead of one before the call and one after (see ARCHITECTURE.md, "Record").
   * Only for a row nobody waits on before the call runs (a decision someone made must be durable
   * before its call, so it goes through `appendAuthorization`). A row never released is still written
   * when the writer closes, and at process exit by the exit step, like a queued one.
   * @param record the row
   * @returns the handle whose `release` queues it
   * @throws GovernanceError `INVALID_INPUT` for a malformed record; `UPSTREAM_UNAVAILABLE` after `close()`
   */
  hold(record: AuthorizationRecord): HeldAuthorization {
    this.#ensureOpen();
    const held: Held = { write: { kind: "authorization", record: normalizeAuthorizationRecord(record) } };
    this.#held.add(held);
    return { release: () => this.#release(held) };
  }

  #release(held: Held): Promise<void> {
    if (held.committed === undefined) {
      this.#held.delete(held);
      held.committed = this.#enqueue(held.write, 0);
    }
    return held.committed;
  }

  /**
   * Replays the spooled batches into the store now (the writer also does so by itself: after it
   * opens, and with growing pauses while the store stays unreachable).
   * @returns how many spooled batches are left (0 once all are in the store)
   */
  replaySpool(): Promise<number> {
    this.#replaying ??= this.#replay().finally(() => {
      this.#replaying = undefined;
    });
    return this.#replaying;
  }

  /**
   * Commits what is queued, tries the spool once more, then refuses later appends. The store stays
   * open (whoever opened it closes it, after this). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      // A held row whose call never wrote its own: the call was authorized, so the row is kept.
      for (const held of [...this.#held]) this.#release(held).catch(() => undefined);
      while (this.#committing !== undefined || this.#queue.length > 0) {
        await (this.#committing ?? this.#commitNext());
      }
      if (this.#replayTimer !== undefined) clearTimeout(this.#replayTimer);
      this.#replayTimer = undefined;
      if (this.#spool !== undefined) {
        const left = await this.replaySpool();
        if (left > 0) {
          this.#warn(
            `sciencegate: ${left} spooled ledger batch(es) wait in ${this.#spool.dir}; the next process that opens this data directory replays them.`,
          );
        }
      }
      this.#stopAtExit();
    })();
    return this.#closing;
  }

  #enqueue(write: LedgerWrite, bytes: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ write, bytes, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Commits the queue on the event loop's next turn, so that calls ending together share a commit;
   * while a commit runs, later writes wait for it and share the next one. Each batch is a turn of its
   * own, so that a caller appending in a loop never keeps other work (I/O, timers) from running.
   */
  #schedule(): void {
    if (this.#committing !== undefined || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#commitNext();
    });
  }

  /** Commits the next batch, unless one is committing; then schedules the one after. */
  async #commitNext(): Promise<void> {
    if (this.#committing !== undefined || this.#queue.length === 0) return;
    const batch = this.#takeBatch();
    this.#inFlight = batch;
    this.#committing = this.#commit(batch);
    await this.#committing;
    this.#committing = undefined;
    this.#inFlight = [];
    if (this.#queue.length > 0) this.#schedule();
  }

  #takeBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    for (const pending of this.#queue) {
      if (count > 0 && (count >= MAX_BATCH_WRITES || bytes + pending.bytes > MAX_BATCH_BYTES)) break;
      bytes += pending.bytes;
      count++;
    }
    return this.#queue.splice(0, count);
  }

  /** Commits one batch, retrying within the bound; settles every write of it. Never throws. */
  async #commit(batch: readonly Pending[]): Promise<void> {
    const writes = batch.map((pending) => pending.write);
    const until = this.#clock.now() + this.#retryWithinMs;
    let pause = FIRST_RETRY_PAUSE_MS;
    for (let again = false; ; again = true) {
      let results: LedgerWriteResult[];
      try {
        results = await this.#store.appendBatch(writes, again ? { again } : undefined);
      } catch (error) {
        const left = until - this.#clock.now();
        if (isGovernanceError(error) && error.retryable && !this.#outage && left > 0) {
          await this.#clock.sleep(Math.min(pause, left)).catch(() => undefined);
          pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS);
          continue;
        }
        this.#spoolOrReject(batch, error);
        return;
      }
      batch.forEach((pending, index) => {
        const result = results[index];
        if (result !== undefined && "stored" in result) pending.resolve();
        else pending.reject(result?.refused ?? new Error("The ledger store returned no result for a write."));
      });
      // The store answers again: what waits in the spool can follow.
      if (this.#outage) {
        this.#outage = false;
        this.#scheduleReplay(0);
      }
      return;
    }
  }

  /** A batch the store could not take: into the spool (durable, replayed later), else its appends fail. */
  #spoolOrReject(batch: readonly Pending[], error: unknown): void {
    const cause = messageOf(error);
    if (this.#spool !== undefined) {
      try {
        this.#spool.write(batch.map((pending) => pending.write));
        if (!this.#outage) {
          this.#warn(
            `sciencegate: the ledger store failed (${cause}); rows are kept in ${this.#spool.dir} until it answers again.`,
          );
        }
        this.#outage = true;
        this.#scheduleReplay(this.#replayPauseMs);
        for (const pending of batch) pending.resolve();
        return;
      } catch (spoolError) {
        const failure = unrecordedError(`${cause}; the spool failed too: ${messageOf(spoolError)}`, error);
        for (const pending of batch) pending.reject(failure);
        return;
      }
    }
    const failure = unrecordedError(cause, error);
    for (const pending of batch) pending.reject(failure);
  }

  #scheduleReplay(delayMs: number): void {
    if (this.#spool === undefined || this.#closed || this.#replayTimer !== undefined) return;
    // A background probe, not governance timing: it must never keep the process alive.
    this.#replayTimer = setTimeout(() => {
      this.#replayTimer = undefined;
      void this.replaySpool();
    }, delayMs);
    this.#replayTimer.unref();
  }

  /** Replays spooled batches, oldest first, until one cannot be committed. */
  async #replay(): Promise<number> {
    const spool = this.#spool;
    if (spool === undefined) return 0;
    const names = spool.list();
    for (const [index, name] of names.entries()) {
      let writes: LedgerWrite[] | undefined;
      try {
        writes = spool.read(name)?.map(normalizeWrite);
      } catch (error) {
        spool.setAside(name);
        this.#warn(
          `sciencegate: spooled ledger batch ${name} cannot be read (${messageOf(error)}); set aside.`,
        );
        continue;
      }
      if (writes === undefined) continue;
      let results: LedgerWriteResult[];
      try {
        results = await this.#store.appendBatch(writes, { again: true });
      } catch {
        this.#replayPauseMs = Math.min(this.#replayPauseMs * 2, MAX_REPLAY_PAUSE_MS);
        this.#scheduleReplay(this.#replayPauseMs);
        return names.length - index;
      }
      const refused = results.flatMap((result) => ("refused" in result ? [result.refused.message] : []));
      if (refused.length === 0) spool.remove(name);
      else {
        spool.setAside(name);
        this.#warn(
          `sciencegate: the ledger store refused ${refused.length} spooled row(s) of ${name} (${refused[0]}); the batch is set aside as ${name}.refused.`,
        );
      }
    }
    this.#replayPauseMs = FIRST_REPLAY_PAUSE_MS;
    return 0;
  }

  /**
   * At process exit (no later turn will come): commits what is queued or in flight synchronously, with
   * `again` (an in-flight commit may have landed), else spools it, else says what was lost.
   */
  #commitAtExit(): void {
    const held = [...this.#held].map((entry) => entry.write);
    const writes = [...held, ...[...this.#inFlight, ...this.#queue].map((pending) => pending.write)];
    if (writes.length === 0) return;
    let failure: unknown;
    try {
      if (this.#store.appendBatchNow === undefined) throw new Error("the store cannot write synchronously");
      this.#store.appendBatchNow(writes);
      return;
    } catch (error) {
      failure = error;
    }
    try {
      if (this.#spool === undefined) throw failure;
      this.#spool.write(writes);
      this.#warn(
        `sciencegate: ${writes.length} ledger row(s) kept in ${this.#spool.dir} at exit (${messageOf(failure)}).`,
      );
    } catch (error) {
      this.#warn(`sciencegate: ${writes.length} ledger row(s) not written at exit: ${messageOf(error)}`);
    }
  }

  #ensureOpen(): void {
    if (this.#closed) throw closedLedgerError();
  }
}

/** A spooled write read back, checked like a new one (the file sat on a disk). */
function normalizeWrite(write: LedgerWrite): LedgerWrite {
  return write.kind === "invocation"
    ? { kind: "invocation", record: normalizeInvocationRecord(write.record), objects: write.objects }
    : { kind: "authorization", record: normalizeAuthorizationRecord(write.record), objects: write.objects };
}

function unrecordedError(cause: string, error: unknown): GovernanceError {
  return new GovernanceError("UPSTREAM_UNAVAILABLE", `The ledger could not record the row: ${cause}.`, {
    retryable: isGovernanceError(error) && error.retryable,
    cause: error,
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
