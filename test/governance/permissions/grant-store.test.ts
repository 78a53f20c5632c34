import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import {
  GRANTS_FILE,
  grantStorePath,
  SqliteGrantStore,
} from "../../../src/governance/permissions/sqlite-grant-store.js";
import { describeGrantStoreConformance } from "../../../src/testing/conformance/grant-store-conformance.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-grants-"));
let dirs = 0;
const freshDir = () => join(scratch, `data-${++dirs}`);
afterAll(() => rm(scratch, { recursive: true, force: true }));

describeGrantStoreConformance("MemoryGrantStore", () => new MemoryGrantStore());
describeGrantStoreConformance("SqliteGrantStore (file)", () =>
  SqliteGrantStore.open(grantStorePath(freshDir())),
);
describeGrantStoreConformance("SqliteGrantStore (:memory:)", () => SqliteGrantStore.open(":memory:"));

const GRANT = {
  id: "g1",
  sessionId: "s1",
  action: "arxiv:download",
  resource: "artifact:arxiv",
  createdAt: "2025-01-01T00:00:00.000Z",
  toolDefinitionHash: "h1",
};

describe("SqliteGrantStore on disk", () => {
  test("grants and epochs survive closing and reopening the data directory", async () => {
    const path = grantStorePath(freshDir());
    expect(path.endsWith(GRANTS_FILE)).toBe(true);
    const first = await SqliteGrantStore.open(path);
    await first.ensure(GRANT);
    await first.nextEpoch("s1");
    await first.nextEpoch("s1");
    await first.close();

    const second = await SqliteGrantStore.open(path);
    expect(await second.find(GRANT)).toEqual(GRANT);
    expect(await second.nextEpoch("s1")).toBe(3);
    await second.close();
  });

  test("two stores open on one file see each other's grants and share one grant per key", async () => {
    const path = grantStorePath(freshDir());
    const a = await SqliteGrantStore.open(path);
    const b = await SqliteGrantStore.open(path);
    const made = await a.ensure(GRANT);
    const again = await b.ensure({ ...GRANT, id: "g2" });
    expect(made.created).toBe(true);
    expect(again).toEqual({ grant: GRANT, created: false });
    await b.revoke("g1");
    expect(await a.find(GRANT)).toBeUndefined();
    await Promise.all([a.close(), b.close()]);
  });

  test("a grant file of schema 1 gains principals on open: its grants are the single user's, and a user's grant of the same key is another grant", async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    const path = grantStorePath(dir);
    const db = new Database(path);
    db.exec(`CREATE TABLE grants (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       id TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, action TEXT NOT NULL, resource TEXT NOT NULL,
       tool_definition_hash TEXT NOT NULL, created_at TEXT NOT NULL, created_ms INTEGER NOT NULL);
     CREATE UNIQUE INDEX grants_key ON grants (session_id, action, resource, tool_definition_hash);
     CREATE TABLE permission_epochs (session_id TEXT PRIMARY KEY, epoch INTEGER NOT NULL);
     CREATE TABLE grant_schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
     INSERT INTO grant_schema_version (id, version) VALUES (1, 1);`);
    db.prepare(
      "INSERT INTO grants (id, session_id, action, resource, tool_definition_hash, created_at, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ).run("g1", "s1", GRANT.action, GRANT.resource, "h1", GRANT.createdAt, Date.parse(GRANT.createdAt));
    db.close();

    const store = await SqliteGrantStore.open(path);
    try {
      expect(await store.find(GRANT)).toEqual(GRANT);
      expect(await store.find({ ...GRANT, principal: "alice" })).toBeUndefined();
      const alice = await store.ensure({ ...GRANT, id: "g2", principal: "alice" });
      expect(alice.created).toBe(true);
      expect((await store.list({ principal: "alice" })).map((grant) => grant.id)).toEqual(["g2"]);
      expect((await store.list()).map((grant) => [grant.id, grant.principal])).toEqual([
        ["g1", undefined],
        ["g2", "alice"],
      ]);
    } finally {
      await store.close();
    }
  });

  test("a file from a newer schema is refused with INVALID_CONFIG naming the file", async () => {
    const path = grantStorePath(freshDir());
    await (await SqliteGrantStore.open(path)).close();
    const db = new Database(path);
    db.prepare("UPDATE grant_schema_version SET version = 99").run();
    db.close();
    await expect(SqliteGrantStore.open(path)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining(path),
    });
  });
});
