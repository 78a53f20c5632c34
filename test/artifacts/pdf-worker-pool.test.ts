/**
 * The warm pdf.js worker pool: reuse, recycling by file count and by memory, a file that crosses a
 * bound ending only its own worker, close().
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { extractPdf } from "../../src/artifacts/extract-pdf.js";
import type { PdfLimits } from "../../src/artifacts/pdf-limits.js";
import { PdfWorkerPool } from "../../src/artifacts/pdf-worker-pool.js";
import { isGovernanceError } from "../../src/core/errors.js";
import { compressionBombPdf } from "../fixtures/pdf/hostile-pdf.js";
import { makePdf, textPages } from "../fixtures/pdf/make-pdf.js";

const MiB = 1024 * 1024;
const pools: PdfWorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function newPool(options: ConstructorParameters<typeof PdfWorkerPool>[0] = {}): PdfWorkerPool {
  const pool = new PdfWorkerPool(options);
  pools.push(pool);
  return pool;
}

let files = 0;
function pdfFile(bytes: Buffer): { pdfPath: string; outDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-pdf-pool-"));
  const pdfPath = join(dir, `paper-${++files}.pdf`);
  writeFileSync(pdfPath, bytes);
  return { pdfPath, outDir: join(dir, "out") };
}

function extract(pool: PdfWorkerPool, bytes: Buffer, limits: Partial<PdfLimits> = {}) {
  return extractPdf(pdfFile(bytes), limits, { extractor: "pdfjs", pool });
}

async function errorCode(promise: Promise<unknown>): Promise<{ code: string; data: unknown }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGovernanceError(error)) throw new Error(`expected a GovernanceError, got ${String(error)}`);
  return { code: error.code, data: error.data };
}

describe("PdfWorkerPool", () => {
  test("one warm worker serves file after file", async () => {
    const pool = newPool();
    for (const pages of [1, 3, 2]) {
      expect((await extract(pool, makePdf(textPages(pages)))).pageCount).toBe(pages);
    }
    expect(pool.stats).toEqual({
      workersStarted: 1,
      workersRecycled: 0,
      workersTerminated: 0,
      idleWorkers: 1,
    });
  });

  test("a file that crosses a bound or times out ends only its own worker; the next file extracts", async () => {
    const pool = newPool();
    await extract(pool, makePdf(textPages(1)));
    expect((await errorCode(extract(pool, makePdf(textPages(5)), { maxPages: 2 }))).code).toBe(
      "RESPONSE_TOO_LARGE",
    );
    expect((await errorCode(extract(pool, makePdf(textPages(40)), { timeoutMs: 1 }))).code).toBe("TIMEOUT");
    expect((await extract(pool, makePdf(textPages(2)))).pageCount).toBe(2);
    expect(pool.stats).toMatchObject({ workersStarted: 3, workersTerminated: 2, idleWorkers: 1 });
  });

  test("a file pdf.js refuses leaves its worker in service", async () => {
    const pool = newPool();
    const broken = Buffer.from("%PDF-1.4\nthis is not a real document\n%%EOF\n");
    expect((await errorCode(extract(pool, broken))).code).toBe("NORMALIZATION_FAILED");
    expect((await extract(pool, makePdf(textPages(1)))).pageCount).toBe(1);
    expect(pool.stats).toMatchObject({ workersStarted: 1, workersTerminated: 0 });
  });

  test("the memory watchdog stops a bomb in a warm worker, which is replaced", async () => {
    const pool = newPool();
    await extract(pool, makePdf(textPages(1)));
    // RunLengthDecode: pdf.js decodes it itself, synchronously; 128 MiB against a 64 MiB budget.
    const bomb = compressionBombPdf({ decodedBytes: 128 * MiB, filter: "RunLengthDecode" });
    const refused = await errorCode(extract(pool, bomb, { maxMemoryBytes: 64 * MiB }));
    expect(refused).toMatchObject({ code: "RESPONSE_TOO_LARGE", data: { limit: "maxMemoryBytes" } });
    expect((await extract(pool, makePdf(textPages(1)))).pageCount).toBe(1);
    expect(pool.stats).toMatchObject({ workersTerminated: 1 });
  });

  test("a worker that a file left holding more than recycleMemoryBytes is replaced, not reused", async () => {
    const pool = newPool({ recycleMemoryBytes: 16 * MiB });
    await extract(pool, makePdf(textPages(1)));
    expect(pool.stats).toMatchObject({ workersStarted: 1, workersRecycled: 0, idleWorkers: 1 });
    // Within the default budget: extracts, but inflating 64 MiB leaves the worker (and process) bloated.
    const bomb = compressionBombPdf({ decodedBytes: 64 * MiB });
    expect((await extract(pool, bomb)).pageCount).toBe(1);
    expect(pool.stats).toMatchObject({ workersRecycled: 1, idleWorkers: 0 });
    await extract(pool, makePdf(textPages(1)));
    expect(pool.stats).toMatchObject({ workersStarted: 2 });
  });

  test("a worker is replaced after maxFilesPerWorker files", async () => {
    const pool = newPool({ maxFilesPerWorker: 2 });
    for (let i = 0; i < 3; i++) await extract(pool, makePdf(textPages(1)));
    expect(pool.stats).toMatchObject({ workersStarted: 2, workersRecycled: 1, idleWorkers: 1 });
  });

  test("concurrent files each get a worker; at most maxIdleWorkers stay warm", async () => {
    const pool = newPool({ maxIdleWorkers: 1 });
    const results = await Promise.all([1, 2, 3].map((n) => extract(pool, makePdf(textPages(n)))));
    expect(results.map((r) => r.pageCount)).toEqual([1, 2, 3]);
    expect(pool.stats).toMatchObject({ workersStarted: 3, idleWorkers: 1 });
  });

  test("close() ends the workers and refuses further files with INVALID_CONFIG", async () => {
    const pool = newPool();
    await extract(pool, makePdf(textPages(1)));
    await pool.close();
    expect(pool.stats.idleWorkers).toBe(0);
    const refused = await errorCode(extract(pool, makePdf(textPages(1))));
    expect(refused.code).toBe("INVALID_CONFIG");
  });

  test("rejects a negative option", () => {
    expect(() => new PdfWorkerPool({ maxIdleWorkers: -1 })).toThrow(/maxIdleWorkers must be a whole number/);
  });
});
