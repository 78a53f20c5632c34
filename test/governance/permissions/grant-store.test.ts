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
