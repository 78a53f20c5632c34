import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import { callJobId } from "../../src/artifacts/download-manager.js";
import {
  DOWNLOAD_JOBS_FILE,
  downloadJobsPath,
  SqliteDownloadJobStore,
} from "../../src/artifacts/download-sqlite-job-store.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { closeDownloadRuntimes, downloadRuntime } from "../artifacts/download-runtime.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-governance-jobs-"));
let files = 0;
const freshJobsFile = () => join(scratch, `shared-${++files}`, "jobs-of-the-app.sqlite");
afterEach(closeDownloadRuntimes);
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** The model's `artifact_download` call `dl-a` on thread t1, downloading candidate a. */
const downloadA = (governance: Governance) =>
  downloadArtifact({
    governance,
    mcpInvocationId: "inv-1",
    candidateId: "a",
    sessionId: "t1",
    threadId: "t1",
    toolCallId: "dl-a",
  });

describe("createGovernance({ jobStore })", () => {
  test("a passed store receives the download's job, no jobs.sqlite is made, and close() closes it", async () => {
    const path = freshJobsFile();
    const jobStore = await SqliteDownloadJobStore.open(path);
    const { governance, transfers } = await downloadRuntime({
      storage: { jobStore },
      permissions: { enforce: false },
    });
    const result = await downloadA(governance);
    expect(result.status).toBe("completed");
    expect(transfers).toEqual(["https://arxiv.org/pdf/a"]);
    const job = await jobStore.get(callJobId("t1", "dl-a"));
    expect(job).toMatchObject({
      jobId: result.jobId,
      status: "completed",
      candidateId: "a",
      threadId: "t1",
      toolCallId: "dl-a",
      actualChecksum: result.actualChecksum,
    });
    expect(await governance.downloads.list()).toEqual([job]);
    expect(existsSync(join(governance.dataDir, DOWNLOAD_JOBS_FILE))).toBe(false);

    await governance.close();
    await expect(jobStore.list()).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
    const reopened = await SqliteDownloadJobStore.open(path);
    expect(await reopened.list()).toEqual([job]);
    await reopened.close();
  });

  test("two runtimes on one shared store: the second replays the first's call and transfers nothing", async () => {
    const path = freshJobsFile();
    const first = await downloadRuntime({
      storage: { jobStore: await SqliteDownloadJobStore.open(path) },
      permissions: { enforce: false },
    });
    const done = await downloadA(first.governance);
    // A second replica: its own ledger, CAS, data directory and fetch, the same job database.
    const second = await downloadRuntime({
      storage: { jobStore: await SqliteDownloadJobStore.open(path) },
      permissions: { enforce: false },
    });
    expect(await second.governance.downloads.jobs.get(callJobId("t1", "dl-a"))).toBeDefined();
    expect(await downloadA(second.governance)).toEqual(done);
    expect(second.transfers).toEqual([]);
    expect(await second.governance.downloads.list()).toHaveLength(1);
  });

  test("without one, the jobs go to <dataDir>/jobs.sqlite and outlive the runtime", async () => {
    const { governance } = await downloadRuntime({ permissions: { enforce: false } });
    const result = await downloadA(governance);
    await governance.close();
    const reopened = await SqliteDownloadJobStore.open(downloadJobsPath(governance.dataDir));
    expect(await reopened.get(result.jobId)).toMatchObject({ status: "completed", toolCallId: "dl-a" });
    await reopened.close();
  });
});
