/**
 * `createGovernance` that fails part-way releases what it opened itself: no SQLite file left open in
 * this process (read from /proc/self/fd) and no child process left running. Stores and a pool the app
 * passed in stay the app's.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { MemoryDownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { DOWNLOAD_JOBS_FILE } from "../../src/artifacts/download-sqlite-job-store.js";
import { grantStorePath } from "../../src/governance/permissions/sqlite-grant-store.js";
import { childPidOf, createSdkTransport } from "../../src/mcp/transports.js";
import type { ToolServerPool } from "../../src/mcp/types.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { isAlive, stdioTestServer } from "../mcp/server-configs.js";
import { canListOpenFiles, openFilesUnder } from "./open-files.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-start-failure-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** A grants database written by a newer Sciencegate: opening it fails after the ledger opened. */
function newerGrantStore(dataDir: string): void {
  const db = new Database(grantStorePath(dataDir));
  db.exec(
    "CREATE TABLE grant_schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);" +
      "INSERT INTO grant_schema_version VALUES (1, 99);",
  );
  db.close();
}

const bare = (): GovernanceOptions => ({ config: { servers: [] }, manifests: { builtin: false } });

describe.skipIf(!canListOpenFiles)("createGovernance failing part-way", () => {
  test("an open runtime holds its SQLite files (the check below can see them)", async () => {
    const dataDir = await mkdtemp(join(scratch, "open-"));
    const governance = await createGovernance({ ...bare(), storage: { dataDir } });
    expect(openFilesUnder(dataDir)).toEqual(
      expect.arrayContaining([join(dataDir, "ledger.sqlite"), grantStorePath(dataDir)]),
    );
    await governance.close();
    expect(openFilesUnder(dataDir)).toEqual([]);
  });

  test("the grant store fails to open after the ledger opened: the ledger is closed again", async () => {
    const dataDir = await mkdtemp(join(scratch, "grants-"));
    newerGrantStore(dataDir);
    await expect(createGovernance({ ...bare(), storage: { dataDir } })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("newer than this Sciencegate supports"),
    });
    expect(existsSync(join(dataDir, "ledger.sqlite"))).toBe(true);
    expect(openFilesUnder(dataDir)).toEqual([]);
  });

  test("the job store fails to open after the ledger and the grants opened: both are closed again", async () => {
    const dataDir = await mkdtemp(join(scratch, "jobs-"));
    // A directory where the job database should be: SQLite cannot open it.
    await mkdir(join(dataDir, DOWNLOAD_JOBS_FILE), { recursive: true });
    await expect(createGovernance({ ...bare(), storage: { dataDir } })).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining("Cannot open the job database"),
    });
    expect(existsSync(grantStorePath(dataDir))).toBe(true);
    expect(openFilesUnder(dataDir)).toEqual([]);
  });

  test("a step after the stdio servers started fails: no child process and no SQLite file is left", {
    timeout: 60_000,
  }, async () => {
    const dataDir = await mkdtemp(join(scratch, "children-"));
    const transports: Transport[] = [];
    const pids: number[] = [];
    const failure = await createGovernance({
      config: { servers: [stdioTestServer("alpha"), stdioTestServer("beta")] },
      manifests: { builtin: false },
      storage: { dataDir },
      mcp: {
        createTransport: (server) => {
          const transport = createSdkTransport(server, { env: process.env });
          transports.push(transport);
          return transport;
        },
      },
      extensions: [
        {
          name: "a broken extension",
          servers: [],
          warnings: () => {
            for (const transport of transports) pids.push(childPidOf(transport) ?? 0);
            throw new Error("the extension's warnings failed");
          },
        },
      ],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ message: "the extension's warnings failed" });
    expect(pids).toHaveLength(2);
    for (const pid of pids) {
      expect(pid).toBeGreaterThan(0);
      expect(isAlive(pid)).toBe(false);
    }
    expect(openFilesUnder(dataDir)).toEqual([]);
  });

  test("catalog.start() throws: the stores it opened are closed; the app's own pool is left to the app", async () => {
    const dataDir = await mkdtemp(join(scratch, "catalog-"));
    const inner = createInMemoryPool({});
    let poolClosed = false;
    const pool: ToolServerPool = {
      ...inner,
      serverIds: () => {
        throw new Error("the pool cannot list its servers");
      },
      close: async () => {
        poolClosed = true;
        await inner.close();
      },
    };
    const jobStore = new MemoryDownloadJobStore();
    await expect(
      createGovernance({ ...bare(), storage: { dataDir, jobStore }, mcp: { pool } }),
    ).rejects.toThrow("the pool cannot list its servers");
    expect(openFilesUnder(dataDir)).toEqual([]);
    expect(poolClosed).toBe(false);
    // A store the app passed in is not closed either.
    await expect(jobStore.list()).resolves.toEqual([]);
  });
});
