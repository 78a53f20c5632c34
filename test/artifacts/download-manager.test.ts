import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { DOWNLOAD_LEDGER_TOOL_ID } from "../../src/artifacts/artifact-ledger-types.js";
import type { DownloadProgress } from "../../src/artifacts/download-types.js";
import { SessionSettings } from "../../src/governance/permissions/session-settings.js";
import {
  createBench,
  droppingBody,
  makeCandidate,
  PDF,
  recordCandidateInvocation,
  stalledBody,
} from "./download-harness.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const sha = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

describe("DownloadManager", () => {
  test("downloads a candidate into the workspace, read-only, with its sha256 and job states", async () => {
    const bench = await createBench([
      makeCandidate({ sizeBytes: PDF.length, checksum: { algorithm: "sha256", value: sha(PDF).slice(7) } }),
    ]);
    bench.serve(URL_1, PDF);
    const progress: DownloadProgress[] = [];
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
      onProgress: (p) => progress.push(p),
    });
    expect(result).toMatchObject({
      status: "completed",
      candidateId: "c1",
      sourceId: "arxiv",
      sourceRecordId: "2401.00001v1",
      bytesDownloaded: PDF.length,
      actualChecksum: sha(PDF),
      finalPath: join(bench.workspaceDir, "downloads/arxiv/2401.00001v1.pdf"),
    });
    expect(new Uint8Array(await readFile(result.finalPath))).toEqual(PDF);
    expect((await stat(result.finalPath)).mode & 0o222).toBe(0);
    expect([...new Set(progress.map((p) => p.status))]).toEqual(["running", "verifying", "completed"]);
    const [job] = await bench.manager.list();
    expect(job).toMatchObject({
      jobId: result.jobId,
      planId: result.planId,
      status: "completed",
      actualChecksum: sha(PDF),
    });
  });

  test("resumes with a Range request after a dropped connection", async () => {
    const bench = await createBench();
    let calls = 0;
    bench.routes.set(URL_1, ({ range }) => {
      calls++;
      if (calls === 1) {
        return new Response(droppingBody(PDF.slice(0, 1000)), {
          headers: { "content-length": String(PDF.length) },
        });
      }
      const start = Number(/bytes=(\d+)-/.exec(range ?? "")?.[1]);
      return new Response(PDF.slice(start), { status: 206 });
    });
    const statuses: string[] = [];
    const result = await bench.settle(
      bench.download({
        mcpInvocationId: "inv-1",
        candidateId: "c1",
        sessionId: "s1",
        onProgress: (p) => statuses.push(p.status),
      }),
    );
    expect(result.status).toBe("completed");
    expect(bench.seen.map((r) => r.range)).toEqual([undefined, "bytes=1000-"]);
    expect(new Uint8Array(await readFile(result.finalPath))).toEqual(PDF);
    expect(result.actualChecksum).toBe(sha(PDF));
    expect(statuses).toContain("retrying");
  });

  test.each([
    ["a foreign host", "https://evil.example.com/paper.pdf", /not on the source's allowlist/],
    ["http:", "http://arxiv.org/pdf/2401.00001v1", /instead of https/],
  ])("refuses a redirect to %s", async (_name, location, message) => {
    const bench = await createBench();
    bench.routes.set(URL_1, () => new Response(null, { status: 302, headers: { location } }));
    bench.serve(location, PDF);
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "PERMISSION_DENIED", retryable: false });
    expect(result.error?.message).toMatch(message);
    expect(bench.seen.map((r) => r.url)).toEqual([URL_1]);
  });

  test("follows an allowed redirect and refuses a sixth one", async () => {
    const bench = await createBench();
    bench.routes.set(
      URL_1,
      () => new Response(null, { status: 301, headers: { location: "https://export.arxiv.org/pdf/a" } }),
    );
    bench.serve("https://export.arxiv.org/pdf/a", PDF);
    const ok = await bench.download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" });
    expect(ok.status).toBe("completed");

    const loop = await createBench();
    loop.routes.set(URL_1, () => new Response(null, { status: 302, headers: { location: URL_1 } }));
    const looped = await loop.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(looped.error?.message).toMatch(/More than 5 redirects/);
    expect(loop.seen).toHaveLength(6);
  });

  test.each([
    ["checksum", { checksum: { algorithm: "sha256" as const, value: "0".repeat(64) } }, /Checksum mismatch/],
    ["size", { sizeBytes: PDF.length + 1 }, /Size mismatch/],
  ])("fails on a %s mismatch and leaves no file", async (_name, overrides, message) => {
    const bench = await createBench([makeCandidate(overrides)]);
    bench.serve(URL_1, PDF);
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(result.status).toBe("failed");
    expect(result.error?.message).toMatch(message);
    await expect(stat(result.finalPath)).rejects.toThrow();
  });

  test.each([
    ["announced", true],
    ["streamed", false],
  ])("stops an oversize body (%s)", async (_name, announce) => {
    const bench = await createBench(undefined, { maxBytes: 1000 });
    bench.routes.set(URL_1, () =>
      announce
        ? new Response(PDF, { headers: { "content-length": String(PDF.length) } })
        : new Response(new Blob([PDF]).stream()),
    );
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(result).toMatchObject({ status: "failed", error: { code: "RESPONSE_TOO_LARGE" } });
  });

  test.each(["../escape.pdf", "a/../../escape.pdf", "/etc/escape.pdf", ".staging/x.pdf"])(
    "refuses destination %s before any request",
    async (destinationPath) => {
      const bench = await createBench();
      bench.serve(URL_1, PDF);
      await expect(
        bench.download({
          mcpInvocationId: "inv-1",
          candidateId: "c1",
          sessionId: "s1",
          destinationPath,
        }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(bench.seen).toHaveLength(0);
      expect(await bench.manager.list()).toHaveLength(0);
    },
  );

  test("refuses a symlink component and an existing file", async () => {
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    await mkdir(bench.workspaceDir, { recursive: true });
    await symlink(bench.dataDir, join(bench.workspaceDir, "link"));
    await writeFile(join(bench.workspaceDir, "taken.pdf"), "old");
    const base = { mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" };
    await expect(bench.download({ ...base, destinationPath: "link/x.pdf" })).rejects.toThrow(/symbolic link/);
    await expect(bench.download({ ...base, destinationPath: "taken.pdf" })).rejects.toThrow(/already exists/);
    expect(await readFile(join(bench.workspaceDir, "taken.pdf"), "utf8")).toBe("old");
    expect(bench.seen).toHaveLength(0);
  });

  test.each([
    ["a candidate the invocation did not return", "inv-1", "other", "NOT_FOUND"],
    ["an unknown invocation", "inv-404", "c1", "NOT_FOUND"],
  ])("refuses %s", async (_name, mcpInvocationId, candidateId, code) => {
    const bench = await createBench();
    await expect(bench.download({ mcpInvocationId, candidateId, sessionId: "s1" })).rejects.toMatchObject({
      code,
    });
    expect(bench.seen).toHaveLength(0);
  });

  test.each([
    [
      "a host off the allowlist",
      makeCandidate({ url: "https://evil.example.com/a.pdf" }),
      "PERMISSION_DENIED",
    ],
    ["another source's candidate", makeCandidate({ sourceId: "pubmed" }), "PERMISSION_DENIED"],
    ["an http URL", makeCandidate({ url: "http://arxiv.org/pdf/a" }), "PERMISSION_DENIED"],
  ])("refuses %s", async (_name, candidate, code) => {
    const bench = await createBench([candidate]);
    await expect(
      bench.download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" }),
    ).rejects.toMatchObject({ code });
  });

  test("uses the result's license with a warning when the candidate has none", async () => {
    const { license: _none, ...unlicensed } = makeCandidate();
    const bench = await createBench([unlicensed]);
    bench.serve(URL_1, PDF);
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(result.status).toBe("completed");
    expect(result.warnings.join()).toMatch(/arXiv non-exclusive license/);
  });

  test("a denied plan starts no job", async () => {
    const bench = await createBench(undefined, {
      authorize: () => ({ allowed: false, reason: "user said no" }),
    });
    bench.serve(URL_1, PDF);
    await expect(
      bench.download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" }),
    ).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect(bench.seen).toHaveLength(0);
  });

  test("cancels a running job, then retries it to completion", async () => {
    const bench = await createBench();
    bench.routes.set(
      URL_1,
      (_request, signal) => new Response(stalledBody(PDF.slice(0, 10), new Promise(() => {}), signal)),
    );
    const seenRunning = new Promise<string>((resolve) => {
      void bench
        .download({
          mcpInvocationId: "inv-1",
          candidateId: "c1",
          sessionId: "s1",
          onProgress: (p) => p.bytesDownloaded > 0 && resolve(p.jobId),
        })
        .then((result) => results.push(result.status));
    });
    const results: string[] = [];
    const jobId = await seenRunning;
    const cancelled = await bench.manager.cancel(jobId);
    expect(cancelled).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(await readdir(join(bench.workspaceDir, ".staging"))).toEqual([]);

    bench.serve(URL_1, PDF);
    const retried = await bench.manager.retry(jobId);
    expect(retried).toMatchObject({ jobId, status: "completed", actualChecksum: sha(PDF) });
    expect(results).toEqual(["cancelled"]);
    await expect(bench.manager.retry(jobId)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(bench.manager.cancel("nope")).rejects.toMatchObject({ code: "UNKNOWN_ID" });
  });

  test("a job that exhausts its retries fails and can be retried later", async () => {
    const bench = await createBench(undefined, { maxAttempts: 2 });
    bench.routes.set(URL_1, () => new Response("busy", { status: 503 }));
    const failed = await bench.settle(
      bench.download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" }),
    );
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "UPSTREAM_UNAVAILABLE", retryable: true },
    });
    expect(bench.seen).toHaveLength(2);
    bench.serve(URL_1, PDF);
    const retried = await bench.manager.retry(failed.jobId);
    expect(retried.status).toBe("completed");
    expect((await bench.manager.list()).map((job) => [job.status, job.attempts])).toEqual([["completed", 3]]);
  });

  test("runs several downloads concurrently", async () => {
    const ids = ["a", "b", "c"];
    const bench = await createBench(
      ids.map((id) =>
        makeCandidate({ candidateId: id, sourceRecordId: id, url: `https://arxiv.org/pdf/${id}` }),
      ),
    );
    let release: (bytes: Uint8Array) => void = () => {};
    const gate = new Promise<Uint8Array>((resolve) => {
      release = resolve;
    });
    for (const id of ids)
      bench.routes.set(`https://arxiv.org/pdf/${id}`, () => new Response(stalledBody(PDF.slice(0, 5), gate)));
    const all = Promise.all(
      ids.map((candidateId) => bench.download({ mcpInvocationId: "inv-1", candidateId, sessionId: "s1" })),
    );
    while (bench.seen.length < ids.length) await new Promise((resolve) => setImmediate(resolve));
    // All three requests are open before any body completes.
    release(PDF.slice(5));
    const results = await all;
    expect(results.map((r) => [r.candidateId, r.status, r.actualChecksum])).toEqual(
      ids.map((id) => [id, "completed", sha(PDF)]),
    );
  });

  test("close() lets a download finish within the grace period, cancels one still running after it, each with its row, and refuses new ones", async () => {
    const ids = ["a", "b"];
    const bench = await createBench(
      ids.map((id) =>
        makeCandidate({ candidateId: id, sourceRecordId: id, url: `https://arxiv.org/pdf/${id}` }),
      ),
    );
    let release: (bytes: Uint8Array) => void = () => {};
    const gate = new Promise<Uint8Array>((resolve) => {
      release = resolve;
    });
    bench.routes.set(
      "https://arxiv.org/pdf/a",
      (_request, signal) => new Response(stalledBody(PDF.slice(0, 5), gate, signal)),
    );
    bench.routes.set(
      "https://arxiv.org/pdf/b",
      (_request, signal) => new Response(stalledBody(PDF.slice(0, 5), new Promise(() => {}), signal)),
    );
    const request = (candidateId: string) => ({ mcpInvocationId: "inv-1", candidateId, sessionId: "s1" });
    const finishing = bench.download(request("a"));
    const stalled = bench.download(request("b"));
    while (bench.seen.length < ids.length) await new Promise((resolve) => setImmediate(resolve));

    // As `close()` of a runtime: the broker stops admitting calls, and both let running ones finish.
    const closing = Promise.all([bench.broker.close(1_000), bench.manager.close(1_000)]);
    await expect(bench.download(request("a"))).rejects.toMatchObject({
      code: "CANCELLED",
      data: { reason: "closed" },
    });
    release(PDF.slice(5));
    expect(await finishing).toMatchObject({ status: "completed", actualChecksum: sha(PDF) });
    await bench.clock.advance(1_000);
    expect(await stalled).toMatchObject({
      status: "cancelled",
      error: { code: "CANCELLED", message: expect.stringContaining("closed while the call was running") },
    });
    await closing;
    const rows = (await bench.ledger.query()).filter((row) => row.toolId === DOWNLOAD_LEDGER_TOOL_ID);
    expect(rows.map((row) => row.error?.code ?? row.status).sort()).toEqual(["CANCELLED", "ok"]);
    expect((await bench.manager.list()).map((job) => job.status).sort()).toEqual(["cancelled", "completed"]);
    await expect(bench.manager.retry((await stalled).jobId)).rejects.toMatchObject({ code: "CANCELLED" });
  });

  describe("a candidate is bound to the session of its invocation", () => {
    test("session B downloading through session A's invocation id is refused and audited", async () => {
      const bench = await createBench();
      bench.serve(URL_1, PDF);
      const request = { mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "B", threadId: "tB" };
      await expect(bench.manager.prepare(request)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
      await expect(bench.download({ ...request, toolCallId: "call-b" })).rejects.toMatchObject({
        code: "PERMISSION_DENIED",
        message: expect.stringContaining("belongs to another session"),
      });
      expect(bench.seen).toHaveLength(0);
      expect(await bench.manager.list()).toHaveLength(0);
      // Planning has no side effect; the call's refusal is its one row, as any refused broker call's.
      const rows = await bench.ledger.query({ sessionId: "B" });
      expect(rows).toHaveLength(1);
      for (const row of rows) {
        expect(row).toMatchObject({ status: "error", toolId: DOWNLOAD_LEDGER_TOOL_ID, threadId: "tB" });
        expect(row.error?.code).toBe("PERMISSION_DENIED");
      }
      const own = await bench.download({
        mcpInvocationId: "inv-1",
        candidateId: "c1",
        sessionId: "s1",
      });
      expect(own.status).toBe("completed");
    });

    test("session B replaying the thread and tool call id of A's download gets a refusal, not A's file", async () => {
      const bench = await createBench();
      bench.serve(URL_1, PDF);
      const key = { threadId: "t-shared", toolCallId: "call-1" };
      const own = await bench.download({
        mcpInvocationId: "inv-1",
        candidateId: "c1",
        sessionId: "s1",
        ...key,
      });
      expect(own.status).toBe("completed");
      const asB = { mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "B", ...key };
      await expect(bench.download(asB)).rejects.toMatchObject({
        code: "PERMISSION_DENIED",
        data: { reason: "tool_call_id_reused" },
      });
      expect(bench.seen).toHaveLength(1);
      const [row] = await bench.ledger.query({ sessionId: "B" });
      expect(row).toMatchObject({ status: "error", toolId: DOWNLOAD_LEDGER_TOOL_ID, threadId: "t-shared" });
      expect(row?.toolCallId).toBeUndefined();
      // A's replay still returns A's result.
      expect(
        await bench.download({
          mcpInvocationId: "inv-1",
          candidateId: "c1",
          sessionId: "s1",
          ...key,
        }),
      ).toEqual(own);
    });

    test("session B does not join A's download running under the same key", async () => {
      const bench = await createBench();
      let release: (bytes: Uint8Array) => void = () => undefined;
      const released = new Promise<Uint8Array>((resolve) => {
        release = resolve;
      });
      bench.routes.set(
        URL_1,
        (_request, signal) => new Response(stalledBody(PDF.slice(0, 5), released, signal), { status: 200 }),
      );
      const key = { threadId: "t-shared", toolCallId: "call-1" };
      const running = bench.download({
        mcpInvocationId: "inv-1",
        candidateId: "c1",
        sessionId: "s1",
        ...key,
      });
      while ((await bench.manager.list())[0]?.status !== "running")
        await new Promise((resolve) => setImmediate(resolve));
      await expect(
        bench.download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "B", ...key }),
      ).rejects.toMatchObject({ code: "PERMISSION_DENIED", data: { reason: "tool_call_id_reused" } });
      release(PDF.slice(5));
      expect((await running).status).toBe("completed");
    });

    test("a source switched off for the requesting session is SOURCE_DISABLED, audited, for its own invocation", async () => {
      const sessions = new SessionSettings();
      const bench = await createBench(undefined, { sessions });
      bench.serve(URL_1, PDF);
      await recordCandidateInvocation(bench, {
        invocationId: "inv-b",
        sessionId: "B",
        toolId: "prepare_download",
        candidates: [makeCandidate()],
      });
      sessions.disableSource("B", "arxiv");
      const request = { mcpInvocationId: "inv-b", candidateId: "c1", sessionId: "B" };
      await expect(bench.manager.prepare(request)).rejects.toMatchObject({ code: "SOURCE_DISABLED" });
      await expect(bench.download(request)).rejects.toMatchObject({ code: "SOURCE_DISABLED" });
      expect(bench.seen).toHaveLength(0);
      const refused = await bench.ledger.query({ sessionId: "B", toolId: DOWNLOAD_LEDGER_TOOL_ID });
      // Planning has no side effect; the call's refusal is its one row (a call of the built-ins' source).
      expect(refused.map((row) => row.error?.code)).toEqual(["SOURCE_DISABLED"]);
      expect(refused[0]?.sourceId).toBe("sciencegate");
      sessions.enableSource("B", "arxiv");
      expect((await bench.download(request)).status).toBe("completed");
    });
  });
});

describe("DownloadManager: name and path length are checked in the plan", () => {
  test("a file name over 255 bytes is INVALID_INPUT before any request", async () => {
    const bench = await createBench([makeCandidate({ filename: `${"a".repeat(300)}.pdf` })]);
    bench.serve(URL_1, PDF);
    const request = { mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1" };
    await expect(bench.manager.prepare(request)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    const error = await bench.download(request).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(
        /304 bytes, over the 255-byte limit.*shorter destinationPath or file name/,
      ),
    });
    expect(bench.seen).toHaveLength(0);
  });

  test("a full path over the platform limit is INVALID_INPUT before any request", async () => {
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    const destinationPath = `${Array.from({ length: 20 }, () => "d".repeat(250)).join("/")}/paper.pdf`;
    const error = await bench
      .download({ mcpInvocationId: "inv-1", candidateId: "c1", sessionId: "s1", destinationPath })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringMatching(
        /full path is \d+ bytes, over the 4000-byte limit.*shorter destinationPath/,
      ),
    });
    expect(bench.seen).toHaveLength(0);
  });
});
