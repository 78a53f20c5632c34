"use strict";
/**
 * The SQLite ledger's batch commit and checkpoints (see `sqlite-ledger.ts`). One batch of appends commits in
 * one IMMEDIATE transaction, each write in a savepoint of its own, so one refused row does not undo the
 * others (`createWriter`). Run as a worker thread, this file is the ledger's checkpointer: WAL
 * checkpoints sync the disk and take milliseconds, so they run off the event loop. Plain CommonJS, so
 * that it runs unchanged from the sources and from the package.
 */
const { isMainThread, parentPort, workerData } = require("node:worker_threads");

/**
 * The writer of one connection.
 * @param {import("better-sqlite3").Database} db the connection
 * @param {Record<string, string>} sql the statements (see `LEDGER_WRITE_SQL` in sqlite-ledger.ts)
 * @returns {{ commit(ops: object[]): object[], commitAgain(ops: object[]): object[] }} `commit` applies a
 *   batch and returns one result per write: `{ stored: true }`, `{ duplicate, existingInvocationId? }`
 *   or `{ failed, code? }`; `commitAgain` does the same for writes that may already have been stored by
 *   an earlier attempt, whose own key is then counted as stored. Both throw when the transaction itself
 *   fails (busy, disk full): then nothing of the batch is stored.
 */
function createWriter(db, sql) {
  const statements = {};
  for (const name of Object.keys(sql)) statements[name] = db.prepare(sql[name]);

  // The key a write collides with, looked up only once its insert was refused: the UNIQUE indexes
  // decide, so that a row costs no lookups of its own.
  const collision = (op) => {
    if (op.kind === "authorization") {
      return statements.authorizationExists.get(op.id) ? { duplicate: "authorization" } : undefined;
    }
    if (statements.invocationExists.get(op.invocationId)) {
      return { duplicate: "invocation", existingInvocationId: op.invocationId };
    }
    if (op.threadId != null && op.toolCallId != null) {
      const existing = statements.callRow.get(op.threadId, op.toolCallId);
      if (existing) return { duplicate: "call", existingInvocationId: String(existing.invocation_id) };
    }
    return undefined;
  };

  // Throws to undo the write's own transaction or savepoint; `Refused` carries the write's result.
  const apply = (op, again) => {
    if (again) {
      const found = collision(op);
      if (found && found.duplicate !== "call") return { stored: true };
      if (found) throw new Refused(found);
    }
    try {
      for (const object of op.objects) {
        const bytes = Buffer.isBuffer(object.bytes)
          ? object.bytes
          : Buffer.from(object.bytes.buffer, object.bytes.byteOffset, object.bytes.byteLength);
        statements.insertObject.run(object.sha256, object.size, bytes);
      }
      if (op.kind === "authorization") statements.insertAuthorization.run(op.values);
      else statements.insertInvocation.run(op.values);
    } catch (error) {
      const code = error?.code;
      const found =
        code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY"
          ? collision(op)
          : undefined;
      throw found ? new Refused(found) : error;
    }
    return { stored: true };
  };
  const resultOf = (error) =>
    error instanceof Refused ? error.result : { failed: messageOf(error), code: error?.code };

  // A lone write is its own transaction; in a batch, each write has a savepoint.
  const single = db.transaction(apply);
  const savepoint = db.transaction(apply);
  const batch = db.transaction((ops, again) =>
    ops.map((op) => {
      try {
        return savepoint(op, again);
      } catch (error) {
        return resultOf(error);
      }
    }),
  );
  // A batch is first tried without the savepoints (two statements per write, a tenth of a call's
  // commit): when no write of it fails, which is the rule, the result is the same. A failing write
  // undoes that attempt whole, and the batch is committed again with a savepoint per write.
  const unguarded = db.transaction((ops, again) =>
    ops.map((op) => {
      try {
        return apply(op, again);
      } catch (error) {
        throw new WriteFailed(error);
      }
    }),
  );
  const commit = (ops, again) => {
    if (ops.length !== 1) {
      try {
        return unguarded.immediate(ops, again);
      } catch (error) {
        // Only a write's own failure: a failed transaction (busy, disk full) throws as it is.
        if (!(error instanceof WriteFailed)) throw error;
        return batch.immediate(ops, again);
      }
    }
    try {
      return [single.immediate(ops[0], again)];
    } catch (error) {
      // For one write, its failure and its transaction's are the same thing.
      return [resultOf(error)];
    }
  };
  return {
    commit: (ops) => commit(ops, false),
    commitAgain: (ops) => commit(ops, true),
  };
}

/** A write of a batch tried without savepoints failed: the batch is committed again with them. */
class WriteFailed extends Error {
  constructor(cause) {
    super("a write of the batch failed", { cause });
  }
}

/** A write refused for a key already recorded; thrown to undo it, caught as its result. */
class Refused extends Error {
  constructor(result) {
    super("refused");
    this.result = result;
  }
}

function messageOf(error) {
  return String(error?.message || error);
}

if (!isMainThread && workerData && workerData.ledgerCheckpointer) {
  // The checkpointer thread: its own connection, one PASSIVE checkpoint per request, which commits of
  // the writing connection may overlap (see ledger-checkpointer.ts for when they are held back).
  const Sqlite = require(workerData.module);
  const db = new Sqlite(workerData.path, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 0");
  parentPort.on("message", (message) => {
    if (message === "close") {
      db.close();
      parentPort.close();
      return;
    }
    try {
      const [result] = db.pragma("wal_checkpoint(PASSIVE)");
      parentPort.postMessage({ ok: true, log: result.log, checkpointed: result.checkpointed });
    } catch (error) {
      parentPort.postMessage({ ok: false, error: messageOf(error) });
    }
  });
  parentPort.postMessage("ready");
}

module.exports = { createWriter };
