import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import { SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import { main } from "../../src/cli/main.js";
import { FileContentStore } from "../../src/governance/audit/content-store.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { ledgerUnderTest } from "../../src/testing/conformance/ledger-under-test.js";
import {
  makeCandidate,
  makeJob,
  PDF,
  publicLookup,
  recordCandidateInvocation,
} from "../artifacts/download-harness.js";
import { runCli, tempDir, writeJson } from "./cli-harness.js";

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
    // One audit row, for the job this command cancelled (none for the one already ended).
    const ledger = await SqliteLedger.open(join(cwd, ".sciencegate", "ledger.sqlite"));
    const rows = await ledger.listAuthorizations();
    await ledger.close();
    expect(rows).toEqual([
      expect.objectContaining({
        action: "cancel_job",
        resource: "job:job-running",
        decisionSource: "operator_cli",
      }),
    ]);
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

/**
 * A data directory as an app leaves it: the arXiv call that offered the candidate (ledger + CAS) and
 * a download job that failed on HTTP 500. The config names no server (the built-in arXiv manifest
 * still gives the allowed hosts).
 */
async function failedDownload() {
  const cwd = tempDir();
  const dataDir = join(cwd, ".sciencegate");
  const ledger = ledgerUnderTest(await SqliteLedger.open(join(dataDir, "ledger.sqlite")));
  await recordCandidateInvocation(
    { ledgerWriter: ledger.writer, store: new FileContentStore(join(dataDir, "cas")) },
    {
      invocationId: "inv-1",
      sessionId: "s1",
      toolId: "prepare_paper_download",
      candidates: [makeCandidate()],
    },
  );
  await ledger.close();
  const jobs = await SqliteDownloadJobStore.open(join(dataDir, "jobs.sqlite"));
  const destinationPath = "downloads/arxiv/2401.00001v1.pdf";
  await jobs.create({
    ...makeJob("job-500", "failed"),
    destinationPath,
    finalPath: join(dataDir, "workspace", destinationPath),
    attempts: 4,
    error: { code: "UPSTREAM_UNAVAILABLE", message: "The server answered HTTP 500.", retryable: true },
  });
  await jobs.close();
  const config = writeJson(cwd, "extensions_config.json", { mcpServers: {} });
  const requests: string[] = [];
  const server = { status: 200 };
  const fetch: DownloadFetch = async (url) => {
    requests.push(url);
    if (server.status !== 200) return new Response("gone", { status: server.status });
    return new Response(PDF, { headers: { "content-length": String(PDF.length) } });
  };
  /** Runs the CLI with the fake server as its fetch. */
  const run = async (argv: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await main([...argv, "--config", config], {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: dataDir },
      cwd,
      isTty: false,
      fetch,
      lookup: publicLookup,
    });
    return { code, stdout, stderr };
  };
  return { dataDir, requests, server, run };
}

describe("sciencegate jobs retry", () => {
  test("retries a failed download to completion, recorded as its own ledger row", async () => {
    const { dataDir, requests, server, run } = await failedDownload();
    server.status = 404;
    const still = await run(["jobs", "retry", "job-500"]);
    expect(still.code).toBe(1);
    expect(still.stdout).toMatch(/Job job-500: failed \(The server answered HTTP 404\.\)/);
    server.status = 200;
    requests.length = 0;
    const retried = await run(["jobs", "retry", "job-500", "--json"]);
    expect(retried.stderr).toBe("");
    expect(retried.code).toBe(0);
    const sha = `sha256:${createHash("sha256").update(PDF).digest("hex")}`;
    const { result } = JSON.parse(retried.stdout);
    expect(result).toMatchObject({ jobId: "job-500", status: "completed", actualChecksum: sha });
    expect(result.finalPath).toBe(join(dataDir, "workspace", "downloads/arxiv/2401.00001v1.pdf"));
    expect(new Uint8Array(await readFile(result.finalPath))).toEqual(PDF);
    expect(requests).toEqual(["https://arxiv.org/pdf/2401.00001v1"]);

    const listed = JSON.parse((await run(["jobs", "--json"])).stdout);
    expect(listed.jobs).toMatchObject([{ jobId: "job-500", status: "completed", attempts: 6 }]);
    expect(listed.jobs[0].error).toBeUndefined();
    const audit = JSON.parse((await run(["audit", "--json"])).stdout);
    // One row per run: the failed retry and the completed one, neither carrying a tool call id.
    const rows = audit.invocations.filter((r: { toolId: string }) => r.toolId === "artifact_download");
    expect(rows.map((r: { status: string; error?: { code: string } }) => [r.status, r.error?.code])).toEqual([
      ["ok", undefined],
      ["error", "NOT_FOUND"],
    ]);
    // The built-ins' source: a download is a call of `sciencegate/artifact_download`, whatever it fetches.
    expect(rows[0]).toMatchObject({ sourceId: "sciencegate", attempts: 1, sessionId: "s1" });
    expect(rows.every((r: { toolCallId?: string }) => r.toolCallId === undefined)).toBe(true);
    const text = await run(["audit"]);
    expect(text.stdout).toMatch(/sciencegate\/artifact_download\s+ok/);
    expect(text.stdout).toMatch(/sciencegate\/artifact_download\s+NOT_FOUND/);
  });

  test("refuses to retry a completed job, with a message saying why", async () => {
    const { requests, run } = await failedDownload();
    expect((await run(["jobs", "retry", "job-500"])).code).toBe(0);
    const again = await run(["jobs", "retry", "job-500"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /INVALID_INPUT: Job job-500 is completed; only failed or cancelled jobs are retried/,
    );
    expect(requests).toHaveLength(1);
  });
});
