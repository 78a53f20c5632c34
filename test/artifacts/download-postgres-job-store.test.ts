import { describe, expect, test } from "vitest";
import type { DownloadJob, DownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { PostgresDownloadJobStore } from "../../src/artifacts/download-postgres-job-store.js";
import { openPostgres } from "../../src/core/open-postgres.js";
import { describeDownloadJobStoreConformance } from "../../src/testing/conformance/download-job-store-conformance.js";
import { closingDatabase, useTestSchemas } from "../postgres/fresh-schema.js";
import { describeCrossProcessJobs } from "./download-cross-process.js";

const schemas = useTestSchemas();

/** The URL each store was opened on, so `reopen` can open it again (a restarted replica). */
const urls = new WeakMap<DownloadJobStore, string>();

async function storeAt(url: string): Promise<PostgresDownloadJobStore> {
  const db = await openPostgres(url, { maxConnections: 4 });
  const store = closingDatabase(await PostgresDownloadJobStore.open(db), db);
  urls.set(store, url);
  return store;
}

describeDownloadJobStoreConformance("PostgresDownloadJobStore", async () => storeAt(await schemas.next()), {
  reopen: async (store) => {
    const url = urls.get(store);
    if (url === undefined) throw new Error("not a store of this file's factory");
    await store.close();
    return storeAt(url);
  },
});

// Two pools on one database: the manager's replica, and another process (a console, `sciencegate jobs`).
describeCrossProcessJobs("PostgreSQL", async () => {
  const url = await schemas.next();
  return { run: await storeAt(url), other: await storeAt(url) };
});

const job = (jobId: string): DownloadJob => ({
  jobId,
  planId: "plan-1",
  mcpInvocationId: "inv-1",
  candidateId: "cand-1",
  sourceId: "arxiv",
  sourceRecordId: "2401.00001",
  url: "https://arxiv.org/pdf/2401.00001",
  finalPath: "/data/workspace/paper.pdf",
  destinationPath: "paper.pdf",
  sessionId: "s1",
  status: "queued",
  bytesDownloaded: 0,
  attempts: 0,
  warnings: [],
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
});

describe("PostgresDownloadJobStore across replicas", () => {
  test("two replicas creating one call's job at once: exactly one wins, and both read it", async () => {
    const url = await schemas.next();
    const [a, b] = await Promise.all([storeAt(url), storeAt(url)]);
    try {
      const settled = await Promise.allSettled([a.create(job("call-job")), b.create(job("call-job"))]);
      expect(settled.map((s) => s.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect(settled.find((s) => s.status === "rejected")).toMatchObject({
        reason: { code: "DUPLICATE_ID" },
      });
      await a.update({ ...job("call-job"), status: "running", bytesDownloaded: 10 });
      expect(await b.get("call-job")).toMatchObject({ status: "running", bytesDownloaded: 10 });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("a job table of schema 1 gains the invocation column, filled from the stored jobs, on open", async () => {
    const url = await schemas.next();
    const db = await openPostgres(url, { maxConnections: 2 });
    try {
      const first = await PostgresDownloadJobStore.open(db);
      await first.create({ ...job("old-1"), mcpInvocationId: "inv-old" });
      await first.create({ ...job("old-2"), mcpInvocationId: "inv-other", createdAt: 1_700_000_000_001 });
      await first.close();
      // Schema 1 is schema 2 without the column and its index.
      await db.query(`DROP INDEX sciencegate_download_jobs_invocation;
        ALTER TABLE sciencegate_download_jobs DROP COLUMN mcp_invocation_id;
        UPDATE sciencegate_schema_versions SET version = 1 WHERE store = 'download_jobs'`);
      const upgraded = await PostgresDownloadJobStore.open(db);
      expect((await upgraded.list({ mcpInvocationId: "inv-old" })).map((j) => j.jobId)).toEqual(["old-1"]);
      expect((await upgraded.list()).map((j) => j.jobId)).toEqual(["old-1", "old-2"]);
      expect(
        await db.query("SELECT version FROM sciencegate_schema_versions WHERE store = 'download_jobs'"),
      ).toEqual([{ version: 2 }]);
    } finally {
      await db.close();
    }
  });

  test("a database that fails is UPSTREAM_UNAVAILABLE, retryable", async () => {
    const db = await openPostgres(await schemas.next(), { maxConnections: 2 });
    const store = await PostgresDownloadJobStore.open(db);
    await db.close();
    await expect(store.create(job("j"))).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      retryable: true,
    });
  });
});
