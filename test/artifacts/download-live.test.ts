/**
 * Live downloads: the manager's subscribers see every job's progress in order, a subscriber that throws
 * breaks nothing, and another process watches and cancels a running job through the job store (a second
 * `SqliteDownloadJobStore` on the same file). The real manager downloads from a loopback publisher.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { cancelStoredJob } from "../../src/artifacts/download-job-store.js";
import { callJobId, DownloadManager } from "../../src/artifacts/download-manager.js";
import { downloadJobsPath, SqliteDownloadJobStore } from "../../src/artifacts/download-sqlite-job-store.js";
import type { DownloadProgress } from "../../src/artifacts/download-types.js";
import { GovernanceError } from "../../src/core/errors.js";
import { describeCrossProcessJobs, InterleavingJobStore } from "./download-cross-process.js";
import { createBench, makeCandidate, makeJob, PDF } from "./download-harness.js";
import { type PacedPublisher, startPacedPublisher } from "./paced-publisher.js";

const scratch = await mkdtemp(join(tmpdir(), "sciencegate-download-live-"));
let files = 0;
afterAll(() => rm(scratch, { recursive: true, force: true }));

describeCrossProcessJobs("SQLite file", async () => {
  const path = downloadJobsPath(join(scratch, `data-${++files}`));
  return { run: await SqliteDownloadJobStore.open(path), other: await SqliteDownloadJobStore.open(path) };
});

const candidate = (id: string, sizeBytes?: number) =>
  makeCandidate({
    candidateId: id,
    sourceRecordId: `2401.0000${id}`,
    url: `https://arxiv.org/pdf/${id}`,
    ...(sizeBytes === undefined ? {} : { sizeBytes }),
  });

/** The events of one job, without the job and candidate ids. */
const stepsOf = (events: DownloadProgress[], jobId: string) =>
  events
    .filter((event) => event.jobId === jobId)
    .map(({ status, bytesDownloaded, totalBytes }) => ({ status, bytesDownloaded, totalBytes }));

describe("DownloadManager.subscribe", () => {
  const publishers: PacedPublisher[] = [];
  afterEach(async () => {
    for (const publisher of publishers.splice(0)) await publisher.close();
  });

  async function lab(candidates = ["a", "b", "c"].map((id) => candidate(id, PDF.length))) {
    const publisher = await startPacedPublisher();
    publishers.push(publisher);
    const bench = await createBench(candidates, { fetch: publisher.fetch, progressPersistMs: 1000 });
    return { ...bench, publisher };
  }

  test("sees every job's events in order: fresh, retried and resumed runs, until it unsubscribes", async () => {
    const { manager, download, publisher, workspaceDir } = await lab();
    // Each part after the first is sent once the previous one was reported, so each is an event.
    for (const id of ["a", "b"]) publisher.serve(`/pdf/${id}`, { bytes: PDF, parts: 4, hold: true });
    manager.subscribe((p) => {
      if (p.status === "running" && p.bytesDownloaded > 0) publisher.release(`/pdf/${p.candidateId}`, 1);
    });
    const first: DownloadProgress[] = [];
    const second: DownloadProgress[] = [];
    const unsubscribe = manager.subscribe((p) => first.push(p));
    manager.subscribe((p) => second.push(p));
    const own = new Map<string, DownloadProgress[]>();
    const start = (candidateId: string) =>
      download({
        mcpInvocationId: "inv-1",
        candidateId,
        sessionId: "s1",
        onProgress: (p) => own.set(candidateId, [...(own.get(candidateId) ?? []), p]),
      });
    // Two at once, and one that fails (the publisher does not have c yet).
    const [a, b, c] = await Promise.all([start("a"), start("b"), start("c")]);
    expect([a.status, b.status, c.status]).toEqual(["completed", "completed", "failed"]);
    for (const [result, id] of [
      [a, "a"],
      [b, "b"],
      [c, "c"],
    ] as const) {
      // The subscriber sees what the call's own hook saw, after the run's start, in the same order.
      const steps = stepsOf(first, result.jobId);
      expect(steps).toEqual([
        { status: "queued", bytesDownloaded: 0, totalBytes: PDF.length },
        ...stepsOf(own.get(id) ?? [], result.jobId),
      ]);
      const bytes = steps.map((step) => step.bytesDownloaded);
      expect(bytes).toEqual([...bytes].sort((x, y) => x - y));
    }
    const statuses = (steps: { status: string }[]) => steps.map((step) => step.status);
    const aSteps = stepsOf(first, a.jobId);
    expect(new Set(statuses(aSteps))).toEqual(new Set(["queued", "running", "verifying", "completed"]));
    // Each part of the body is an event of its own.
    expect(aSteps.filter((s) => s.status === "running" && s.bytesDownloaded > 0)).toHaveLength(4);
    expect(aSteps.at(-1)).toEqual({
      status: "completed",
      bytesDownloaded: PDF.length,
      totalBytes: PDF.length,
    });
    expect(statuses(stepsOf(first, c.jobId))).toEqual(["queued", "running", "failed"]);
    expect(second).toEqual(first);

    unsubscribe();
    unsubscribe();
    const seenBefore = first.length;
    // A retry of the failed job, and a call whose job a crashed process left mid-way, resumed.
    publisher.serve("/pdf/c", { bytes: PDF, parts: 2 });
    expect((await manager.retry(c.jobId)).status).toBe("completed");
    const STAGED = "5e1f0c9a2b3d4e6f5e1f0c9a2b3d4e6f.part";
    const resumedId = callJobId("t1", "call-9");
    await manager.jobs.create({
      ...makeJob(resumedId, "running"),
      candidateId: "a",
      sourceRecordId: "2401.0000a",
      url: "https://arxiv.org/pdf/a",
      threadId: "t1",
      toolCallId: "call-9",
      destinationPath: "again/a.pdf",
      finalPath: join(workspaceDir, "again/a.pdf"),
      stagingName: STAGED,
    });
    await mkdir(join(workspaceDir, ".staging"), { recursive: true });
    await writeFile(join(workspaceDir, ".staging", STAGED), "");
    const resumed = await download({
      mcpInvocationId: "inv-1",
      candidateId: "a",
      sessionId: "s1",
      destinationPath: "again/a.pdf",
      threadId: "t1",
      toolCallId: "call-9",
    });
    expect(resumed).toMatchObject({ jobId: resumedId, status: "completed" });
    expect(first).toHaveLength(seenBefore);
    const retried = second.slice(seenBefore).filter((p) => p.jobId === c.jobId);
    expect(statuses(retried)[0]).toBe("queued");
    expect(retried.at(-1)).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect(statuses(stepsOf(second, resumedId))).toEqual(
      expect.arrayContaining(["queued", "running", "completed"]),
    );
    expect(stepsOf(second, resumedId)[0]?.status).toBe("queued");
  });

  test("a subscriber that throws breaks neither the download nor the other subscribers", async () => {
    const { manager, download, publisher } = await lab();
    publisher.serve("/pdf/a", { bytes: PDF, parts: 4 });
    let thrown = 0;
    manager.subscribe(() => {
      thrown++;
      throw new Error("the console's socket is gone");
    });
    // An async listener whose promise rejects: no unhandled rejection (vitest would fail the run).
    manager.subscribe(async () => {
      throw new Error("the console's queue is full");
    });
    const seen: DownloadProgress[] = [];
    manager.subscribe((p) => seen.push(p));
    const own: DownloadProgress[] = [];
    const result = await download({
      mcpInvocationId: "inv-1",
      candidateId: "a",
      sessionId: "s1",
      onProgress: (p) => own.push(p),
    });
    expect(result).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect(result.error).toBeUndefined();
    expect(thrown).toBe(seen.length);
    expect(seen.slice(1)).toEqual(own);
    expect(seen.at(-1)).toMatchObject({ status: "completed" });
  });

  test("a job cancelled here without running here (left by a crashed process) is reported cancelled", async () => {
    const { manager } = await lab();
    const seen: DownloadProgress[] = [];
    manager.subscribe((p) => seen.push(p));
    await manager.jobs.create({ ...makeJob("orphan", "running"), bytesDownloaded: 10 });
    await manager.cancel("orphan");
    expect(seen).toEqual([{ jobId: "orphan", candidateId: "c1", status: "cancelled", bytesDownloaded: 10 }]);
    await manager.cancel("orphan");
    expect(seen).toHaveLength(1);
  });
});

describe("a cancel that reaches the store while the file is checked and placed", () => {
  test("comes first: the placed file is taken back and the job ends cancelled with one row", async () => {
    const path = downloadJobsPath(join(scratch, `data-${++files}`));
    const [run, other] = [await SqliteDownloadJobStore.open(path), await SqliteDownloadJobStore.open(path)];
    const publisher = await startPacedPublisher();
    try {
      const jobStore = new InterleavingJobStore(run);
      const bench = await createBench([candidate("a", PDF.length)], {
        jobStore,
        fetch: publisher.fetch,
        progressPersistMs: 1000,
      });
      publisher.serve("/pdf/a", { bytes: PDF, parts: 2 });
      // As soon as the run has stored `verifying`, another process cancels the job.
      jobStore.afterWrite = {
        status: "verifying",
        run: async () => {
          const [job] = await other.list();
          await cancelStoredJob(other, job?.jobId ?? "", {
            error: new GovernanceError("CANCELLED", "Cancelled from the console."),
            now: bench.clock.now(),
          });
        },
      };
      const result = await bench.download({
        mcpInvocationId: "inv-1",
        candidateId: "a",
        sessionId: "s1",
      });
      expect(result).toMatchObject({
        status: "cancelled",
        error: { message: "Cancelled from the console." },
      });
      expect(jobStore.writes.map((w) => [w.status, w.written])).toEqual([
        ["running", true],
        ["verifying", true],
        ["completed", false],
        ["cancelled", true],
      ]);
      await expect(stat(result.finalPath)).rejects.toMatchObject({ code: "ENOENT" });
      expect(await readdir(join(bench.workspaceDir, ".staging"))).toEqual([]);
      expect(await other.get(result.jobId)).toMatchObject({
        status: "cancelled",
        bytesDownloaded: PDF.length,
      });
      expect(await bench.ledger.query({ toolId: "artifact_download" })).toMatchObject([
        { status: "error", error: { code: "CANCELLED" } },
      ]);
    } finally {
      await publisher.close();
      await run.close();
      await other.close();
    }
  });
});

test("progressPersistMs must be a positive number of milliseconds", async () => {
  const bench = await createBench();
  for (const bad of [0, -1, Number.NaN]) {
    expect(
      () =>
        new DownloadManager({
          ledgerWriter: bench.ledgerWriter,
          store: bench.store,
          catalog: { source: () => undefined },
          workspaceDir: bench.workspaceDir,
          progressPersistMs: bad,
        }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_INPUT",
        message: expect.stringContaining("progressPersistMs"),
      }),
    );
  }
});
