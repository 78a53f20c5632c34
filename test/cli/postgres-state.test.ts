/** `sciencegate grants` and `sciencegate jobs` read the database `SCIENCEGATE_DATABASE_URL` names. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { PostgresDownloadJobStore } from "../../src/artifacts/download-postgres-job-store.js";
import { openPostgres } from "../../src/core/open-postgres.js";
import { PostgresGrantStore } from "../../src/governance/permissions/postgres-grant-store.js";
import { PostgresSessionStateStore } from "../../src/governance/permissions/postgres-session-state-store.js";
import { schemaUrls } from "../postgres/fresh-schema.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import { runCli, tempDir } from "./cli-harness.js";

let server: TestPostgres;
let url: string;
beforeAll(async () => {
  server = await openTestPostgres();
  url = await schemaUrls(await server.createDatabase()).next();
  const db = await openPostgres(url, { maxConnections: 2 });
  const grants = await PostgresGrantStore.open(db);
  await grants.ensure({
    id: "grant-pg",
    sessionId: "s1",
    action: "demo:write",
    resource: "demo:write",
    createdAt: "2026-01-01T00:00:00.000Z",
    toolDefinitionHash: "h1",
  });
  const jobs = await PostgresDownloadJobStore.open(db);
  await jobs.create({
    jobId: "job-pg",
    planId: "plan-1",
    mcpInvocationId: "inv-1",
    candidateId: "a",
    sourceId: "arxiv",
    sourceRecordId: "2401.00001",
    url: "https://arxiv.org/pdf/2401.00001",
    finalPath: "/data/workspace/a.pdf",
    destinationPath: "a.pdf",
    sessionId: "s1",
    status: "running",
    bytesDownloaded: 10,
    attempts: 1,
    warnings: [],
    createdAt: 1,
    updatedAt: 1,
  });
  await db.close();
}, 60_000);
afterAll(() => server?.stop(), 60_000);

describe("the CLI with SCIENCEGATE_DATABASE_URL", () => {
  test("grants list and revoke work on the database, and no grants.sqlite is made", async () => {
    const dir = tempDir();
    const env = { SCIENCEGATE_DATABASE_URL: url };
    const listed = await runCli(["grants", "list", "--json"], env, dir);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).grants.map((g: { id: string }) => g.id)).toEqual(["grant-pg"]);
    expect((await runCli(["grants", "revoke", "grant-pg"], env, dir)).code).toBe(0);
    expect(JSON.parse((await runCli(["grants", "list", "--json"], env, dir)).stdout).grants).toEqual([]);
    expect(existsSync(join(dir, ".sciencegate", "grants.sqlite"))).toBe(false);
  });

  test("grants mode sets a session's approval mode that another process's session state follows at once", async () => {
    const db = await openPostgres(url, { maxConnections: 2 });
    const running = await PostgresSessionStateStore.open(db);
    try {
      expect(running.approvalMode("desk-1")).toBeUndefined();
      const env = { SCIENCEGATE_DATABASE_URL: url };
      const set = await runCli(["grants", "mode", "--session", "desk-1", "always_allow", "--json"], env);
      expect(set.code).toBe(0);
      expect(JSON.parse(set.stdout)).toEqual({ sessionId: "desk-1", mode: "always_allow" });
      await vi.waitFor(() => expect(running.approvalMode("desk-1")).toBe("always_allow"));
      expect((await runCli(["grants", "mode", "--session", "desk-1", "ask_for_dangerous"], env)).stdout).toBe(
        "Session desk-1 is now ask_for_dangerous.\n",
      );
      await vi.waitFor(() => expect(running.approvalMode("desk-1")).toBe("ask_for_dangerous"));
    } finally {
      await running.close();
      await db.close();
    }
  });

  test("jobs list and cancel work on the database", async () => {
    const dir = tempDir();
    const env = { SCIENCEGATE_DATABASE_URL: url };
    const listed = await runCli(["jobs", "list", "--json"], env, dir);
    expect(JSON.parse(listed.stdout).jobs.map((j: { jobId: string }) => j.jobId)).toEqual(["job-pg"]);
    const cancelled = await runCli(["jobs", "cancel", "job-pg", "--json"], env, dir);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout).job).toMatchObject({ jobId: "job-pg", status: "cancelled" });
    expect(existsSync(join(dir, ".sciencegate", "jobs.sqlite"))).toBe(false);
  });
});
