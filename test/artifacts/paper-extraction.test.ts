import { createHash } from "node:crypto";
import { appendFile, readFile, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import type { ExtractionLedgerEntry } from "../../src/artifacts/artifact-ledger-types.js";
import { extractDownloadedPaper, type PaperExtractionRuntime } from "../../src/artifacts/paper-extraction.js";
import { compressionBombPdf } from "../fixtures/pdf/hostile-pdf.js";
import { makePdf } from "../fixtures/pdf/make-pdf.js";
import { createBench, makeJob } from "./download-harness.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const PAPER = makePdf([["BRAF V600E in melanoma"], [], ["Discussion"]]);

/** A completed download of `bytes`, and the extraction runtime over the bench's ledger and CAS. */
async function downloaded(bytes: Uint8Array = PAPER) {
  const bench = await createBench();
  bench.serve(URL_1, bytes);
  const { jobId } = await bench.download({
    mcpInvocationId: "inv-1",
    candidateId: "c1",
    sessionId: "s1",
  });
  const runtime: PaperExtractionRuntime = { broker: bench.extractionBroker() };
  const rows = () => bench.ledger.query({ toolId: "paper_extract_pdf" });
  return { bench, jobId, runtime, rows };
}

const request = (artifactJobId: string, toolCallId?: string) => ({
  artifactJobId,
  sessionId: "s1",
  threadId: "t1",
  ...(toolCallId === undefined ? {} : { toolCallId }),
});

describe("extractDownloadedPaper", () => {
  test("records one ok row whose entry makes the record full text; a replayed call parses nothing", async () => {
    const { bench, jobId, runtime, rows } = await downloaded();
    const before = await bench.manager.jobs.get(jobId);
    const result = await extractDownloadedPaper(runtime, request(jobId, "ex-1"));
    expect(result).toMatchObject({
      artifactJobId: jobId,
      extractionJobId: `extract-${jobId}`,
      pageCount: 3,
      sourceId: "arxiv",
      sourceRecordId: "2401.00001v1",
      fullTextRetrieved: true,
      contentScope: "full-text",
    });
    expect(await readFile(result.textPath, "utf8")).toContain("BRAF V600E in melanoma");
    const [row] = await rows();
    expect(row).toMatchObject({
      sessionId: "s1",
      threadId: "t1",
      toolCallId: "ex-1",
      // A call of the built-ins' in-process source; the record's source is in the entry below.
      sourceId: "sciencegate",
      toolId: "paper_extract_pdf",
      status: "ok",
      attempts: 1,
    });
    expect(await bench.store.getJson(row?.requestRef as string)).toMatchObject({
      input: { artifactJobId: jobId },
    });
    const entry = await bench.store.getJson<ExtractionLedgerEntry>(row?.normalizedRef as string);
    expect(entry).toMatchObject({
      kind: "paper_extract_pdf",
      artifactJobId: jobId,
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sourceId: "arxiv",
      sourceRecordId: "2401.00001v1",
      inputSha256: createHash("sha256").update(PAPER).digest("hex"),
      textPath: result.textPath,
      manifestPath: result.manifestPath,
      pageCount: 3,
      warnings: result.warnings,
      fullTextRetrieved: true,
      contentScope: "full-text",
    });
    expect(await bench.manager.jobs.get(jobId)).toEqual(before);

    // The same call again answers from the ledger: the output is gone and stays gone.
    await rm(dirname(result.textPath), { recursive: true });
    expect(await extractDownloadedPaper(runtime, request(jobId, "ex-1"))).toEqual(result);
    expect(await rows()).toHaveLength(1);
    await expect(stat(result.textPath)).rejects.toThrow();
  });

  test("another call on the same job reuses the extraction and gets its own row", async () => {
    const { jobId, runtime, rows } = await downloaded();
    const first = await extractDownloadedPaper(runtime, request(jobId, "ex-1"));
    // A second parse would rewrite fulltext.md and drop this marker.
    await appendFile(first.textPath, "\nMARKER\n");
    const [second, third] = await Promise.all([
      extractDownloadedPaper(runtime, request(jobId, "ex-2")),
      extractDownloadedPaper(runtime, request(jobId)),
    ]);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await readFile(first.textPath, "utf8")).toContain("MARKER");
    expect((await rows()).map((r) => r.toolCallId ?? null).sort()).toEqual(["ex-1", "ex-2", null]);
  });

  test("a non-PDF is refused with an error row, replayed as such, and the download stays completed", async () => {
    const { bench, jobId, runtime, rows } = await downloaded(
      new TextEncoder().encode("<html>paywall</html>"),
    );
    const before = await bench.manager.jobs.get(jobId);
    const refused = { code: "INVALID_INPUT", message: expect.stringContaining("%PDF-") };
    await expect(extractDownloadedPaper(runtime, request(jobId, "ex-1"))).rejects.toMatchObject(refused);
    await expect(extractDownloadedPaper(runtime, request(jobId, "ex-1"))).rejects.toMatchObject(refused);
    const recorded = await rows();
    expect(recorded).toMatchObject([
      { status: "error", sourceId: "sciencegate", toolCallId: "ex-1", error: { code: "INVALID_INPUT" } },
    ]);
    expect(recorded[0]?.normalizedRef).toBeUndefined();
    expect(await bench.manager.jobs.get(jobId)).toEqual(before);
  });

  test("a downloaded compression bomb is refused under the runtime's memory budget, with an error row", async () => {
    // 66 KB downloaded, 64 MiB inflated; a 32 MiB budget lets one stream inflate to 16 MiB.
    const { bench, jobId, rows } = await downloaded(compressionBombPdf({ decodedBytes: 64 * 1024 * 1024 }));
    const before = await bench.manager.jobs.get(jobId);
    // pdf.js's stream cap refuses it (pdftotext inflates a bomb without holding it: only time binds it).
    const bounded: PaperExtractionRuntime = {
      broker: bench.extractionBroker({ extractor: "pdfjs", limits: { maxMemoryBytes: 32 * 1024 * 1024 } }),
    };
    await expect(extractDownloadedPaper(bounded, request(jobId, "ex-1"))).rejects.toMatchObject({
      code: "RESPONSE_TOO_LARGE",
      message: expect.stringContaining("maxMemoryBytes"),
      data: { limit: "maxMemoryBytes", max: 32 * 1024 * 1024 },
    });
    expect(await rows()).toMatchObject([
      { status: "error", toolCallId: "ex-1", error: { code: "RESPONSE_TOO_LARGE", retryable: false } },
    ]);
    expect(await bench.manager.jobs.get(jobId)).toEqual(before);
  });

  test.each([
    ["running", true],
    ["failed", false],
  ] as const)("a %s download is refused (retryable: %s) with an error row", async (status, retryable) => {
    const { bench, runtime, rows } = await downloaded();
    await bench.manager.jobs.create(makeJob("j1", status));
    await expect(extractDownloadedPaper(runtime, request("j1", "ex-1"))).rejects.toMatchObject({
      code: "INVALID_INPUT",
      retryable,
    });
    expect(await rows()).toMatchObject([{ status: "error", error: { code: "INVALID_INPUT", retryable } }]);
    expect((await bench.manager.jobs.get("j1"))?.status).toBe(status);
  });

  test("an unknown job is refused with a row of the built-ins' source (it names no record's source)", async () => {
    const { runtime, rows } = await downloaded();
    await expect(extractDownloadedPaper(runtime, request("nope", "ex-1"))).rejects.toMatchObject({
      code: "UNKNOWN_ID",
    });
    // Through the broker every refused call has its row; it names only the in-process source.
    expect(await rows()).toMatchObject([
      { sourceId: "sciencegate", status: "error", error: { code: "UNKNOWN_ID" } },
    ]);
  });

  describe("a download is extracted only by the session that downloaded it", () => {
    test("session B extracting session A's job is refused without its text, and audited in B", async () => {
      const { bench, jobId, runtime, rows } = await downloaded();
      const asB = { artifactJobId: jobId, sessionId: "B", threadId: "tB", toolCallId: "ex-b" };
      const refusal = await extractDownloadedPaper(runtime, asB).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toMatchObject({
        code: "PERMISSION_DENIED",
        message: expect.stringContaining("belongs to another session"),
        data: { reason: "job_of_another_session", artifactJobId: jobId },
      });
      // Nothing of A's job is told: not its source, record, path or status.
      const told = JSON.stringify({
        message: (refusal as Error).message,
        data: (refusal as { data: unknown }).data,
      });
      for (const secret of ["arxiv", "2401.00001", "papers", "completed", "s1"])
        expect(told).not.toContain(secret);
      // Nothing was extracted, and B's attempt is a row of B's, under B's own key (which replays the
      // refusal, as the broker records every refused call), naming none of A's job.
      await expect(stat(join(bench.dataDir, "papers", jobId))).rejects.toThrow();
      const [row] = await rows();
      expect(row).toMatchObject({
        sessionId: "B",
        threadId: "tB",
        toolCallId: "ex-b",
        status: "error",
        error: { code: "PERMISSION_DENIED" },
      });
      // A's own extraction is unaffected.
      expect((await extractDownloadedPaper(runtime, request(jobId, "ex-a"))).pageCount).toBe(3);
    });

    test("session B replaying the call key of A's extraction gets A's refusal, not A's result", async () => {
      const { runtime, jobId, rows } = await downloaded();
      await extractDownloadedPaper(runtime, request(jobId, "ex-1"));
      // B names A's thread and tool call id: a replay would hand over A's recorded result (its paths).
      const asB = { artifactJobId: jobId, sessionId: "B", threadId: "t1", toolCallId: "ex-1" };
      await expect(extractDownloadedPaper(runtime, asB)).rejects.toMatchObject({
        code: "PERMISSION_DENIED",
        data: { reason: "tool_call_id_reused" },
      });
      const recorded = await rows();
      expect(recorded.map((row) => [row.sessionId, row.status, row.toolCallId ?? null])).toEqual([
        ["s1", "ok", "ex-1"],
        ["B", "error", null],
      ]);
    });
  });
});
