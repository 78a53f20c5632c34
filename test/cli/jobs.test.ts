import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import { makeJob } from "../artifacts/download-harness.js";
import { runCli, tempDir } from "./cli-harness.js";

async function seeded() {
  const cwd = tempDir();
  const store = await SqliteDownloadJobStore.open(join(cwd, ".sciencegate", "jobs.sqlite"));
  await store.create(makeJob("job-running", "running"));
  await store.create({
    ...makeJob("job-failed", "failed"),
    error: { code: "NOT_FOUND", message: "HTTP 404", retryable: false },
  });
  await store.close();
  return cwd;
}

describe("sciencegate jobs", () => {
  test("lists nothing in an empty data directory", async () => {
    const run = await runCli(["jobs", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ jobs: [] });
  });

  test("lists stored jobs as text and JSON", async () => {
    const cwd = await seeded();
    const text = await runCli(["jobs", "list"], {}, cwd);
    expect(text.stdout).toMatch(/job-running\s+running/);
    expect(text.stdout).toMatch(/job-failed\s+failed .*NOT_FOUND: HTTP 404/);
    const json = JSON.parse((await runCli(["jobs", "list", "--json"], {}, cwd)).stdout);
    expect(json.jobs.map((job: { jobId: string }) => job.jobId)).toEqual(["job-running", "job-failed"]);
  });

  test("cancel ends an unfinished job and leaves a finished one alone", async () => {
    const cwd = await seeded();
    const run = await runCli(["jobs", "cancel", "job-running", "--json"], {}, cwd);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).job).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    const again = await runCli(["jobs", "cancel", "job-failed"], {}, cwd);
    expect(again.stdout).toMatch(/already failed/);
    const listed = JSON.parse((await runCli(["jobs", "--json"], {}, cwd)).stdout);
    expect(listed.jobs.map((job: { status: string }) => job.status)).toEqual(["cancelled", "failed"]);
  });

  test.each([
    [["jobs", "cancel", "nope"], 1, /UNKNOWN_ID|No download job 'nope'/],
    [["jobs", "cancel"], 2, /jobs cancel ID/],
    [["jobs", "frobnicate"], 2, /jobs list/],
  ])("%j exits %i", async (argv, code, message) => {
    const run = await runCli(argv, {}, await seeded());
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
  });
});
