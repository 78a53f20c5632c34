import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { SqliteLedger } from "../../../src/governance/audit/sqlite-ledger.js";
import { describeLedgerConformance } from "../../../src/testing/conformance/ledger-conformance.js";
import { ledgerUnderTest } from "../../../src/testing/conformance/ledger-under-test.js";
import { ledgerRow } from "./ledger-row.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-ledger-"));
let files = 0;
const freshPath = () => join(scratch, `db-${++files}`, "ledger.sqlite");
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** What schema 5 added (the principal columns): dropped to make a ledger of an older schema. */
const DROP_PRINCIPAL = `DROP INDEX invocations_principal; DROP INDEX authorizations_principal;
  ALTER TABLE invocations DROP COLUMN principal; ALTER TABLE authorizations DROP COLUMN principal;`;

describeLedgerConformance("MemoryLedger", () => new MemoryLedger());
describeLedgerConformance("MemoryLedger (objects)", () => new MemoryLedger({ maxInlineBytes: 1024 }));
describeLedgerConformance("SqliteLedger (file)", () => SqliteLedger.open(freshPath()));
describeLedgerConformance("SqliteLedger (:memory:)", () => SqliteLedger.open(":memory:"));
describeLedgerConformance("SqliteLedger (no objects)", () =>
  SqliteLedger.open(freshPath(), { maxInlineBytes: 0 }),
);

const row = ledgerRow;
/** A ledger file with its writer: appends through the writer, reads from the store. */
const open = async (path: string) => ledgerUnderTest(await SqliteLedger.open(path));

describe("SqliteLedger on disk", () => {
  test("opening creates missing parent directories and turns on WAL", async () => {
    const path = join(scratch, "deep", "er", "ledger.sqlite");
    const ledger = await open(path);
    expect((ledger.store as SqliteLedger).path).toBe(path);
    await ledger.append(row("wal-1"));
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.prepare("SELECT version FROM schema_version").pluck().get()).toBe(5);
    } finally {
      raw.close();
      await ledger.close();
    }
  });

  test("appends started in the same tick share one commit: 20 rows cost the WAL about what one does", async () => {
    const path = freshPath();
    const ledger = await open(path);
    const admin = new Database(path);
    // The WAL's size after a checkpoint that empties it counts the frames the next commits wrote.
    const walBytesOf = async (appends: () => Promise<unknown>) => {
      admin.pragma("wal_checkpoint(TRUNCATE)");
      await appends();
      return statSync(`${path}-wal`).size;
    };
    try {
      await ledger.append(row("warm-up"));
      const one = await walBytesOf(() => ledger.append(row("single")));
      const twenty = await walBytesOf(() =>
        Promise.all(Array.from({ length: 20 }, (_, i) => ledger.append(row(`group-${i}`)))),
      );
      // One transaction per append wrote ~20x the frames of one; a group commit writes each page once.
      expect(twenty).toBeLessThanOrEqual(2 * one);
      expect((await ledger.query()).length).toBe(22);
    } finally {
      admin.close();
      await ledger.close();
    }
  });

  test("a second ledger on the same file sees the rows, before and after a restart", async () => {
    const path = freshPath();
    const first = await open(path);
    const record = row("persist-1", { threadId: "t1", toolCallId: "c1", rawRef: `sha256:${"f".repeat(64)}` });
    await first.append(record);
    await first.appendAuthorization({
      id: "auth-1",
      sessionId: "s1",
      sourceId: "arxiv",
      toolId: "download",
      action: "download",
      resource: "artifact:arxiv",
      decisionSource: "allow_matching",
      createdAt: "2025-01-01T00:00:00.000Z",
      epoch: 3,
    });
    const second = await open(path);
    expect(await second.findByCall("t1", "c1")).toEqual(record);
    await first.close();
    await second.close();

    const restarted = await open(path);
    expect(await restarted.get("persist-1")).toEqual(record);
    expect((await restarted.listAuthorizations()).map((a) => a.epoch)).toEqual([3]);
    await restarted.close();
  });

  test("a tool call recorded through one connection is a duplicate for another", async () => {
    const path = freshPath();
    const a = await open(path);
    const b = await open(path);
    await a.append(row("x-1", { threadId: "t1", toolCallId: "c1" }));
    await expect(b.append(row("x-2", { threadId: "t1", toolCallId: "c1" }))).rejects.toMatchObject({
      code: "DUPLICATE_ID",
      data: { existingInvocationId: "x-1" },
    });
    await Promise.all([a.close(), b.close()]);
  });

  test("the database itself refuses a second row for one thread and tool call", async () => {
    const path = freshPath();
    const ledger = await open(path);
    await ledger.append(row("db-1", { threadId: "t1", toolCallId: "c1" }));
    await ledger.close();
    // A writer that skips our checks (another version, a manual fix) still hits the UNIQUE index.
    const raw = new Database(path);
    const copy = raw.prepare(
      `INSERT INTO invocations (invocation_id, session_id, thread_id, tool_call_id, source_id, tool_id, status,
        started_at, started_ms, finished_at, duration_ms, attempts, cache_hit, queue_wait_ms)
       SELECT 'db-2', session_id, thread_id, tool_call_id, source_id, tool_id, status, started_at, started_ms,
        finished_at, duration_ms, attempts, cache_hit, queue_wait_ms FROM invocations`,
    );
    expect(() => copy.run()).toThrow(/UNIQUE/);
    raw.close();
  });

  test("200 concurrent appends through two connections to one file lose no row", async () => {
    const path = freshPath();
    const a = await open(path);
    const b = await open(path);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 === 0 ? a : b).append(row(`load-${i}`, { threadId: "t", toolCallId: `c-${i}` })),
      ),
    );
    await Promise.all([a.close(), b.close()]);
    const reopened = await open(path);
    expect((await reopened.summary()).calls).toBe(200);
    expect(await reopened.findByCall("t", "c-199")).toMatchObject({ invocationId: "load-199" });
    await reopened.close();
  });

  test("a ledger of schema 2 gains the browsing indexes on open, keeps its rows, and pages along an index", async () => {
    const path = freshPath();
    const old = await open(path);
    for (let i = 0; i < 5; i++)
      await old.append(row(`v2-${i}`, { startedAt: `2025-01-01T00:00:0${i}.000Z` }));
    await old.close();
    // Schema 2 is schema 3 without the browsing indexes (4 only escapes text, 5 adds the principal).
    const raw = new Database(path);
    raw.exec(`${DROP_PRINCIPAL} DROP INDEX invocations_started; DROP INDEX invocations_source; DROP INDEX invocations_tool_only;
      DROP INDEX authorizations_created; UPDATE schema_version SET version = 2`);
    raw.close();

    const upgraded = await open(path);
    const page = await upgraded.query({ order: "desc", limit: 2, after: "v2-3" });
    expect(page.map((r) => r.invocationId)).toEqual(["v2-2", "v2-1"]);
    await upgraded.close();
    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare("SELECT version FROM schema_version").pluck().get()).toBe(5);
      const indexes = check
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
        .pluck()
        .all();
      expect(indexes).toEqual(
        expect.arrayContaining([
          "authorizations_created",
          "invocations_source",
          "invocations_started",
          "invocations_tool_only",
        ]),
      );
      // The statement shape of a page after a cursor: an index range in order, no sort of the table.
      const plan = check
        .prepare(`EXPLAIN QUERY PLAN SELECT * FROM invocations WHERE started_ms <= ? AND (started_ms < ? OR seq < ?)
          ORDER BY started_ms DESC, seq DESC LIMIT ?`)
        .all(0, 0, 0, 50) as { detail: string }[];
      expect(plan.map((p) => p.detail).join("; ")).toMatch(
        /^SEARCH invocations USING INDEX invocations_started/,
      );
    } finally {
      check.close();
    }
  });

  test("a ledger of schema 3 holding a U+FFFF gets it escaped on open, and reads it back as it was written", async () => {
    const path = freshPath();
    const older = await open(path);
    await older.append(row("ffff-1", { sessionId: "s-ffff", runId: "placeholder" }));
    await older.close();
    // What schema 3 stored for text holding U+FFFF: the text itself. Unescaped, U+FFFF U+E000 would
    // read back as a NUL.
    const written = "run\uFFFF\uE000x";
    const raw = new Database(path);
    raw
      .prepare("UPDATE invocations SET run_id = ?, error = NULL WHERE invocation_id = 'ffff-1'")
      .run(written);
    raw.exec(DROP_PRINCIPAL);
    raw.prepare("UPDATE schema_version SET version = 3").run();
    raw.close();
    const upgraded = await open(path);
    try {
      expect((await upgraded.get("ffff-1"))?.runId).toBe(written);
      expect(await upgraded.query({ runId: written })).toHaveLength(1);
    } finally {
      await upgraded.close();
    }
  });

  test("a ledger of schema 4 gains the principal columns on open: old rows have none, new ones are filtered by it", async () => {
    const path = freshPath();
    const older = await open(path);
    await older.append(row("before-1"));
    await older.close();
    const raw = new Database(path);
    raw.exec(`${DROP_PRINCIPAL} UPDATE schema_version SET version = 4`);
    raw.close();
    const upgraded = await open(path);
    try {
      await upgraded.append(row("after-1", { principal: "alice" }));
      expect((await upgraded.get("before-1"))?.principal).toBeUndefined();
      expect((await upgraded.query({ principal: "alice" })).map((r) => r.invocationId)).toEqual(["after-1"]);
    } finally {
      await upgraded.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare("SELECT version FROM schema_version").pluck().get()).toBe(5);
      const plan = check
        .prepare("EXPLAIN QUERY PLAN SELECT * FROM invocations WHERE principal = ? ORDER BY started_ms, seq")
        .all("alice") as { detail: string }[];
      expect(plan.map((p) => p.detail).join("; ")).toMatch(/USING INDEX invocations_principal/);
    } finally {
      check.close();
    }
  });

  test("a ledger written by a newer schema is refused with INVALID_CONFIG and left untouched", async () => {
    const path = freshPath();
    await (await SqliteLedger.open(path)).close();
    const raw = new Database(path);
    raw.prepare("UPDATE schema_version SET version = 99").run();
    raw.close();
    await expect(SqliteLedger.open(path)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      data: { version: 99, supported: 5 },
    });
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT version FROM schema_version").pluck().get()).toBe(99);
    check.close();
  });

  test("importing the module does not load better-sqlite3; opening a ledger does", async () => {
    const moduleUrl = pathToFileURL(
      fileURLToPath(new URL("../../../src/governance/audit/sqlite-ledger.ts", import.meta.url)),
    );
    const script = `
      import { createRequire } from "node:module";
      const cache = createRequire(import.meta.url).cache;
      const loaded = () => Object.keys(cache).some((k) => k.includes("better-sqlite3"));
      const { SqliteLedger } = await import(${JSON.stringify(moduleUrl.href)});
      const before = loaded();
      await (await SqliteLedger.open(":memory:")).close();
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--import",
      "tsx",
      "--input-type=module",
      "--eval",
      script,
    ]);
    expect(JSON.parse(stdout)).toEqual({ before: false, after: true });
  });
});
