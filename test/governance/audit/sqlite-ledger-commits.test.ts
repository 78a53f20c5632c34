/**
 * How the SQLite ledger commits through its writer: WAL checkpoints in a thread of its own (the log
 * stays bounded, batches wait for a running one), and the writer's queue committed when the process exits.
 */
import { execFile } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
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

const walBytes = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe("SqliteLedger commits", () => {
  test("checkpoints run in the ledger's thread and keep the log bounded while rows keep coming", async () => {
    const path = freshPath();
    const ledger = await open(path);
    try {
      const rows = 3_000;
      for (let i = 0; i < rows; i++) {
        const objects = objectsOf(i);
        // One awaited append at a time: every row is its own commit, the worst case for the log.
        await ledger.append(row(`r${i}`, objects), objects);
      }
      const { thread, count } = ledger.checkpoints();
      expect(thread).toBe(true);
      // A checkpoint every 64 rows, less those that fell while one was still running.
      expect(count).toBeGreaterThan(10);
      // Without checkpoints the log would hold every commit's pages: 3,000 commits of several 4 KiB
      // pages each is over 30 MiB. With them it restarts and stays near one checkpoint's worth.
      expect(walBytes(path)).toBeLessThan(8 * 1024 * 1024);
      expect((await ledger.summary()).calls).toBe(rows);
    } finally {
      await ledger.close();
    }
  });

  test("without the thread SQLite checkpoints by itself and the log stays bounded too", async () => {
    const path = freshPath();
    const ledger = await open(path, { checkpointThread: false });
    try {
      for (let i = 0; i < 1_500; i++) {
        const objects = objectsOf(i);
        await ledger.append(row(`r${i}`, objects), objects);
      }
      expect(ledger.checkpoints()).toEqual({ thread: false, count: 0 });
      expect(walBytes(path)).toBeLessThan(8 * 1024 * 1024);
      expect((await ledger.summary()).calls).toBe(1_500);
    } finally {
      await ledger.close();
    }
  });

  test("appends made while a checkpoint runs wait for it and all commit", async () => {
    const ledger = await open(freshPath());
    try {
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
// The thread starts in the background; once it runs, every 64th row asks it for a checkpoint.
while (!store.checkpoints.thread) await new Promise((resolve) => setTimeout(resolve, 10));
for (let i = 0; i < 400; i++) {
  await ledger.append({ invocationId: "s" + i, sessionId: "s", sourceId: "a", toolId: "b", status: "ok",
    startedAt: "2025-01-01T00:00:00.000Z", finishedAt: "2025-01-01T00:00:00.000Z", durationMs: 0,
    attempts: 1, cacheHit: false, queueWaitMs: 0 });
}
const checkpoints = store.checkpoints.count;
await ledger.close();
await store.close();
console.log("done " + checkpoints);
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      cwd: repoRoot,
    });
    // Without the fix the process ends (exit code 13, a top-level await never settled) at the first
    // commit that waits for a checkpoint, and execFile rejects.
    expect(stdout).toMatch(/^done [1-9]\d*\n$/);
    const reopened = await open(path);
    try {
      expect((await reopened.summary()).calls).toBe(400);
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
