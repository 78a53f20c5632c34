import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { MemoryDownloadJobStore } from "../../src/artifacts/download-job-store.js";
import { SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import { createBench, makeJob, PDF } from "./download-harness.js";

describe.each([
  ["memory", async () => new MemoryDownloadJobStore()],
  ["sqlite", async () => SqliteDownloadJobStore.open(":memory:")],
])("%s download job store", (_name, open) => {
  test("creates, updates and lists jobs in creation order; ids are unique", async () => {
    const store = await open();
    await store.create(makeJob("b"));
    await store.create(makeJob("a"));
    await expect(store.create(makeJob("a"))).rejects.toMatchObject({ code: "DUPLICATE_ID" });
    await store.update({ ...makeJob("a"), status: "completed", actualChecksum: "sha256:x" });
    await expect(store.update(makeJob("zz"))).rejects.toMatchObject({ code: "UNKNOWN_ID" });
    expect((await store.list()).map((job) => [job.jobId, job.status])).toEqual([
      ["b", "queued"],
      ["a", "completed"],
    ]);
    expect(await store.get("a")).toMatchObject({ actualChecksum: "sha256:x" });
    expect(await store.get("nope")).toBeUndefined();
    await store.close();
  });
});

test("jobs survive a restart of the manager in the SQLite file", async () => {
  const path = join(await mkdtemp(join(tmpdir(), "sciencegate-jobs-")), "jobs.sqlite");
  const jobStore = await SqliteDownloadJobStore.open(path);
  const bench = await createBench(undefined, { jobStore });
  bench.serve("https://arxiv.org/pdf/2401.00001v1", PDF);
  const result = await bench.download({
    mcpInvocationId: "inv-1",
    candidateId: "c1",
    sessionId: "s1",
  });
  await jobStore.close();
  const reopened = await SqliteDownloadJobStore.open(path);
  expect(await reopened.get(result.jobId)).toMatchObject({
    status: "completed",
    actualChecksum: result.actualChecksum,
    bytesDownloaded: PDF.length,
  });
  await reopened.close();
});
