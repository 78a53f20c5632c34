/**
 * How the SQLite ledger commits through its writer: WAL checkpoints in a thread of its own (commits go on
 * while one runs, the log stays bounded, a pause lets it start over), and the writer's queue committed
 * when the process exits.
 */
import { execFile } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { jsonObject } from "../../../src/governance/audit/content-object.js";
import type { InvocationRecord } from "../../../src/governance/audit/ledger.js";
import { SqliteLedger, type SqliteLedgerOptions } from "../../../src/governance/audit/sqlite-ledger.js";
import { ledgerUnderTest } from "../../../src/testing/conformance/ledger-under-test.js";
import { repoRoot } from "../../mcp/server-configs.js";
import { ledgerRow } from "./ledger-row.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-ledger-commits-"));
let files = 0;
const freshPath = () => join(scratch, `db-${++files}`, "ledger.sqlite");
afterAll(() => rm(scratch, { recursive: true, force: true }));

function row(id: string, objects: readonly { ref: string }[]): InvocationRecord {
  return ledgerRow(id, {
    ...(objects[0] ? { requestRef: objects[0].ref } : {}),
    ...(objects[1] ? { rawRef: objects[1].ref } : {}),
    ...(objects[2] ? { normalizedRef: objects[2].ref } : {}),
  });
}

/** Three objects of a few hundred bytes each, like a call's request, raw and normalized results. */
function objectsOf(i: number) {
  return [0, 1, 2].map((k) => jsonObject({ i, k, text: `record ${i} part ${k} `.repeat(20) }));
}

const open = async (path: string, options?: SqliteLedgerOptions) => {
  const ledger = ledgerUnderTest(await SqliteLedger.open(path, options));
  return Object.assign(ledger, { checkpoints: () => (ledger.store as SqliteLedger).checkpoints });
};

/**
 * The frames in a ledger's log now, as a checkpoint from a connection of its own reports them (tried
 * again while the ledger's own checkpoint is running: the log is then not reported).
 */
async function logFrames(path: string): Promise<number> {
  const db = new Database(path);
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      const [result] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number }[];
      if (result && result.busy === 0 && result.log >= 0) return result.log;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error("the log's length was never reported");
  } finally {
    db.close();
  }
}

type OpenLedger = Awaited<ReturnType<typeof open>>;

/** Appends rows one awaited commit at a time (each its own commit, the worst case for the log). */
async function appendOneByOne(
  ledger: OpenLedger,
  prefix: string,
  count: number,
  after?: (i: number) => void,
) {
  for (let i = 0; i < count; i++) {
    const objects = objectsOf(i);
    await ledger.append(row(`${prefix}${i}`, objects), objects);
    after?.(i);
  }
}

/** A ledger whose checkpointer thread runs (it starts in the background; one row is committed first). */
async function openWithThread(path: string, prefix: string): Promise<OpenLedger> {
  const ledger = await open(path);
  await ledger.append(row(`${prefix}-first`, objectsOf(0)), objectsOf(0));
  await expect.poll(() => ledger.checkpoints().thread).toBe(true);
  return ledger;
}

const walBytes = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe("SqliteLedger commits", () => {
  test("checkpoints run in the ledger's thread while rows keep coming; the log stays bounded, and few of them hold commits back", async () => {
    const path = freshPath();
    const ledger = await openWithThread(path, "r");
    try {
      const rows = 3_000;
      let heldEarly = -1;
      await appendOneByOne(ledger, "r", rows, (i) => {
        if (i === 300) heldEarly = ledger.checkpoints().held;
      });
      const { count, held } = ledger.checkpoints();
      // A checkpoint every 64 rows, less those that fell while one was still running.
      expect(count).toBeGreaterThan(10);
      // Below its bound the log grows while checkpoints overlap the commits: none holds them back.
      expect(heldEarly).toBe(0);
      // Past it (3,000 commits of about 24 pages each, over 280 MiB of log without checkpoints), an
      // occasional checkpoint holds commits back so that the log starts over.
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(count / 4);
      expect(walBytes(path)).toBeLessThan(80 * 1024 * 1024);
      expect((await ledger.summary()).calls).toBe(rows + 1);
    } finally {
      await ledger.close();
    }
  });

  test("a pause in commits checkpoints the whole log: the next commit starts it over", async () => {
    const path = freshPath();
    const ledger = await openWithThread(path, "p");
    try {
      await appendOneByOne(ledger, "p", 600);
      // The checkpoints overlapped the commits: the log has grown past a few checkpoints' worth (without
      // a checkpoint from here, which would reach its end itself).
      expect(walBytes(path)).toBeGreaterThan(16 * 1024 * 1024);
      const before = ledger.checkpoints().count;
      // Nothing is committed now: within a few tens of ms a checkpoint runs, and nothing overlaps it.
      await expect.poll(() => ledger.checkpoints().count, { timeout: 5_000 }).toBeGreaterThan(before);
      await ledger.append(row("p-after", objectsOf(1)), objectsOf(1));
      // The log holds that one commit's pages only: the ledger's own checkpoint in the pause reached its end.
      expect(await logFrames(path)).toBeLessThan(100);
      expect(ledger.checkpoints().held).toBe(0);
      expect((await ledger.summary()).calls).toBe(602);
    } finally {
      await ledger.close();
    }
  });

  test("without the thread SQLite checkpoints by itself and the log stays bounded too", async () => {
    const path = freshPath();
    const ledger = await open(path, { checkpointThread: false });
    try {
      await appendOneByOne(ledger, "r", 1_500);
      expect(ledger.checkpoints()).toEqual({ thread: false, count: 0, held: 0 });
      expect(walBytes(path)).toBeLessThan(8 * 1024 * 1024);
      expect((await ledger.summary()).calls).toBe(1_500);
    } finally {
      await ledger.close();
    }
  });

  test("appends made while checkpoints run all commit", async () => {
    const ledger = await open(freshPath());
    try {
      await expect.poll(() => ledger.checkpoints().thread).toBe(true);
      const pending: Promise<void>[] = [];
      for (let i = 0; i < 2_000; i++) {
        const objects = objectsOf(i);
        pending.push(ledger.append(row(`c${i}`, objects), objects));
        // Yield now and then so that commits (and so checkpoints) happen between the appends.
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(pending);
      expect(ledger.checkpoints().count).toBeGreaterThan(0);
      expect((await ledger.summary()).calls).toBe(2_000);
    } finally {
      await ledger.close();
    }
  });

  test("a script that awaits one append after another runs to its end: a held commit keeps the process alive", async () => {
    // Nothing but the ledger holds the event loop here (as in a script whose MCP children are idle
    // between calls): a commit held back for a running checkpoint must not let the process exit.
    const path = freshPath();
    const script = join(scratch, `sequential-${files}.mts`);
    const auditModule = pathToFileURL(join(repoRoot, "src/governance/audit/index.ts")).href;
    writeFileSync(
      script,
      `import { LedgerWriter, SqliteLedger } from ${JSON.stringify(auditModule)};
const store = await SqliteLedger.open(${JSON.stringify(path)});
const ledger = new LedgerWriter(store);
// The thread starts in the background; once it runs, every 64th row asks it for a checkpoint, and once
// the log is past its bound a checkpoint holds the commits back: rows go on until three have.
while (!store.checkpoints.thread) await new Promise((resolve) => setTimeout(resolve, 10));
let rows = 0;
while (store.checkpoints.held < 3 && rows < 50_000) {
  await ledger.append({ invocationId: "s" + rows, sessionId: "s", sourceId: "a", toolId: "b", status: "error",
    startedAt: "2025-01-01T00:00:00.000Z", finishedAt: "2025-01-01T00:00:00.000Z", durationMs: 0,
    attempts: 1, cacheHit: false, queueWaitMs: 0,
    error: { code: "TOOL_FAILED", message: "x".repeat(8_000), retryable: false, attempts: 1 } });
  rows++;
}
const { held } = store.checkpoints;
await ledger.close();
await store.close();
console.log("done " + rows + " " + held);
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      cwd: repoRoot,
    });
    // Without the fix the process ends (exit code 13, a top-level await never settled) at the first
    // commit that waits for a checkpoint, and execFile rejects.
    const [, rows, held] = /^done (\d+) (\d+)\n$/.exec(stdout) ?? [];
    expect(Number(held)).toBeGreaterThanOrEqual(3);
    const reopened = await open(path);
    try {
      expect((await reopened.summary()).calls).toBe(Number(rows));
    } finally {
      await reopened.close();
    }
  });

  test("rows still queued in the writer when the process exits normally are committed on the way out", async () => {
    const path = freshPath();
    const script = join(scratch, `exit-writer-${files}.mts`);
    const auditModule = pathToFileURL(join(repoRoot, "src/governance/audit/index.ts")).href;
    writeFileSync(
      script,
      `import { LedgerWriter, SqliteLedger } from ${JSON.stringify(auditModule)};
const ledger = new LedgerWriter(await SqliteLedger.open(${JSON.stringify(path)}));
for (let i = 0; i < 100; i++) {
  void ledger.append({ invocationId: "x" + i, sessionId: "s", sourceId: "a", toolId: "b", status: "ok",
    startedAt: "2025-01-01T00:00:00.000Z", finishedAt: "2025-01-01T00:00:00.000Z", durationMs: 0,
    attempts: 1, cacheHit: false, queueWaitMs: 0 });
}
process.exit(0);
`,
    );
    const { stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      cwd: repoRoot,
    });
    expect(stderr).toBe("");
    const reopened = await open(path);
    try {
      expect((await reopened.summary()).calls).toBe(100);
    } finally {
      await reopened.close();
    }
  });
});
