import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { DownloadLedgerEntry } from "../../src/artifacts/artifact-ledger-types.js";
import { callJobId } from "../../src/artifacts/download-manager.js";
import { createBench, makeCandidate, makeJob, PDF, stalledBody } from "./download-harness.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const DESTINATION = "downloads/arxiv/2401.00001v1.pdf";
const sha = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const call = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  threadId: "t1",
  toolCallId: "call-1",
};

/** The download rows of the bench's ledger (the bench seeds one MCP row, `inv-1`). */
const rowsOf = async (bench: Awaited<ReturnType<typeof createBench>>) =>
  bench.ledger.query({ toolId: "artifact_download" });

describe("download ledger rows", () => {
  test("a completed download appends one ok row: plan, entry, license, authorization, call ids, timing", async () => {
    const bench = await createBench(undefined, {
      authorize: () => ({ allowed: true, authorizationId: "auth-7" }),
    });
    bench.serve(URL_1, PDF);
    const result = await bench.download(call);
    const [row, ...more] = await rowsOf(bench);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      sessionId: "s1",
      threadId: "t1",
      toolCallId: "call-1",
      // A call of the built-ins' in-process source; the candidate's source is in its entry.
      sourceId: "sciencegate",
      toolId: "artifact_download",
      status: "ok",
      attempts: 1,
      license: "CC-BY-4.0",
      authorizationId: "auth-7",
      cacheHit: false,
      durationMs: 0,
      startedAt: "2026-01-01T00:00:00.000Z",
    });
    // The request object is what the call asked (as for every broker call); the entry is what it did.
    const request = await bench.store.getJson<{ input: unknown }>(row?.requestRef as string);
    expect(request).toMatchObject({
      sourceId: "sciencegate",
      toolId: "artifact_download",
      input: { mcpInvocationId: "inv-1", candidateId: "c1" },
    });
    const entry = await bench.store.getJson<DownloadLedgerEntry>(row?.normalizedRef as string);
    expect(entry).toMatchObject({
      kind: "artifact_download",
      planId: result.planId,
      jobId: result.jobId,
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sourceId: "arxiv",
      sourceRecordId: "2401.00001v1",
      url: URL_1,
      finalPath: result.finalPath,
      destinationPath: DESTINATION,
      actualChecksum: sha(PDF),
      bytesDownloaded: PDF.length,
      status: "completed",
    });
  });

  test.each([
    ["failed", "checksum", { code: "INVALID_INPUT", message: expect.stringMatching(/Checksum mismatch/) }],
    ["cancelled", "cancel", { code: "CANCELLED", message: "The download was cancelled." }],
  ])(
    "a %s download (%s) appends one error row; its job keeps the entry's facts",
    async (status, how, error) => {
      const checksum = { algorithm: "sha256" as const, value: "0".repeat(64) };
      const bench = await createBench(how === "checksum" ? [makeCandidate({ checksum })] : undefined);
      if (how === "checksum") bench.serve(URL_1, PDF);
      else {
        const never = new Promise<Uint8Array>(() => {});
        bench.routes.set(URL_1, (_r, signal) => new Response(stalledBody(PDF.slice(0, 10), never, signal)));
      }
      const result = await bench.download({
        ...call,
        onProgress: (p) => {
          if (how === "cancel" && p.bytesDownloaded > 0) void bench.manager.cancel(p.jobId);
        },
      });
      expect(result.status).toBe(status);
      const rows = await rowsOf(bench);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        status: "error",
        toolCallId: "call-1",
        error: { ...error, attempts: 1 },
      });
      // An error row has no result object (as for every broker call): the job holds the outcome.
      const job = await bench.manager.jobs.get(result.jobId);
      expect(job).toMatchObject({ status, jobId: result.jobId });
      expect(job?.actualChecksum).toBeUndefined();
    },
  );

  test("a retry appends its own row without the tool call id and counts only its own attempts", async () => {
    const bench = await createBench(undefined, { maxAttempts: 2 });
    bench.routes.set(URL_1, () => new Response("busy", { status: 503 }));
    const failed = await bench.settle(bench.download(call));
    expect(failed.status).toBe("failed");
    bench.serve(URL_1, PDF);
    expect((await bench.manager.retry(failed.jobId)).status).toBe("completed");
    const rows = await rowsOf(bench);
    expect(rows.map((r) => [r.status, r.toolCallId, r.threadId, r.attempts])).toEqual([
      ["error", "call-1", "t1", 2],
      ["ok", undefined, "t1", 1],
    ]);
  });

  test("a download refused by the permission hook leaves one error row and no job", async () => {
    const bench = await createBench(undefined, {
      authorize: () => ({ allowed: false, reason: "denied by the user", authorizationId: "auth-9" }),
    });
    await expect(bench.download(call)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(await bench.manager.list()).toEqual([]);
    expect(await rowsOf(bench)).toMatchObject([
      { status: "error", authorizationId: "auth-9", attempts: 0, error: { code: "PERMISSION_DENIED" } },
    ]);
    expect((await rowsOf(bench))[0]?.normalizedRef).toBeUndefined();
    // The same call asked again replays the refusal: nothing is asked, appended or fetched.
    await expect(bench.download(call)).rejects.toThrow(/denied by the user/);
    expect(await rowsOf(bench)).toHaveLength(1);
    expect(bench.seen).toEqual([]);
  });
});

describe("download replay by thread:toolCallId", () => {
  test("a finished call returns its recorded result without a second transfer or row", async () => {
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    const first = await bench.download(call);
    const again = await bench.download(call);
    expect(again).toEqual(first);
    expect(bench.seen).toHaveLength(1);
    expect(await rowsOf(bench)).toHaveLength(1);
    expect(await bench.ledgerWriter.reader.findByCall("t1", "call-1")).toBeDefined();
    expect(await bench.ledgerWriter.reader.findByCall("t1", "call-2")).toBeUndefined();
    // The file exists now, yet the replay never reaches the no-overwrite check.
    expect(new Uint8Array(await readFile(first.finalPath))).toEqual(PDF);
  });

  test("a failed call replays its failure instead of downloading again", async () => {
    const bench = await createBench(undefined, { maxAttempts: 1 });
    bench.routes.set(URL_1, () => new Response("gone", { status: 410 }));
    const first = await bench.download(call);
    bench.serve(URL_1, PDF);
    expect(await bench.download(call)).toEqual(first);
    expect(bench.seen).toHaveLength(1);
  });

  test("concurrent twins of one call share a single download", async () => {
    const bench = await createBench();
    let release: (bytes: Uint8Array) => void = () => {};
    const rest = new Promise<Uint8Array>((resolve) => {
      release = resolve;
    });
    bench.routes.set(URL_1, () => new Response(stalledBody(PDF.slice(0, 10), rest)));
    const twins = [bench.download(call), bench.download(call)];
    while (bench.seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const third = bench.download(call);
    release(PDF.slice(10));
    const [a, b, c] = await Promise.all([...twins, third]);
    expect(a?.status).toBe("completed");
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(bench.seen).toHaveLength(1);
    expect(await rowsOf(bench)).toHaveLength(1);
  });

  test("a call whose job a crashed process left running resumes it with a Range request", async () => {
    const STAGED = "5e1f0c9a2b3d4e6f5e1f0c9a2b3d4e6f.part";
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    const jobId = callJobId("t1", "call-1");
    await bench.manager.jobs.create({
      ...makeJob(jobId, "running"),
      threadId: "t1",
      toolCallId: "call-1",
      destinationPath: DESTINATION,
      finalPath: join(bench.workspaceDir, DESTINATION),
      stagingName: STAGED,
      bytesDownloaded: 1000,
      attempts: 1,
    });
    await mkdir(join(bench.workspaceDir, ".staging"), { recursive: true });
    await writeFile(join(bench.workspaceDir, ".staging", STAGED), PDF.slice(0, 1000));
    const result = await bench.download(call);
    expect(result).toMatchObject({ jobId, status: "completed", actualChecksum: sha(PDF) });
    expect(bench.seen.map((r) => r.range)).toEqual(["bytes=1000-"]);
    expect(await rowsOf(bench)).toMatchObject([{ toolCallId: "call-1", status: "ok" }]);
  });

  test("cancelling a job a crashed process left running audits it once, under its call", async () => {
    const bench = await createBench();
    const jobId = callJobId("t1", "call-1");
    await bench.manager.jobs.create({
      ...makeJob(jobId, "running"),
      threadId: "t1",
      toolCallId: "call-1",
      attempts: 2,
    });
    expect(await bench.manager.cancel(jobId)).toMatchObject({
      status: "cancelled",
      error: { code: "CANCELLED" },
    });
    expect(await bench.manager.cancel(jobId)).toMatchObject({ status: "cancelled" });
    const rows = await rowsOf(bench);
    expect(rows).toMatchObject([
      { threadId: "t1", toolCallId: "call-1", status: "error", attempts: 2, error: { code: "CANCELLED" } },
    ]);
    expect(await bench.manager.jobs.get(jobId)).toMatchObject({ jobId, status: "cancelled" });
    expect(bench.seen).toEqual([]);
  });

  test("job ids of calls are stable per thread and tool call, and differ otherwise", () => {
    expect(callJobId("t1", "c1")).toBe(callJobId("t1", "c1"));
    expect(new Set([callJobId("t1", "c1"), callJobId("t1", "c2"), callJobId("t2", "c1")]).size).toBe(3);
    expect(callJobId("t1", "c1")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
