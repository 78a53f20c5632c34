import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { extractPdf } from "../../src/artifacts/extract-pdf.js";
import { DEFAULT_PDF_LIMITS } from "../../src/artifacts/pdf-limits.js";
import type { PdfManifest } from "../../src/artifacts/pdf-manifest.js";
import { rejection } from "../fixtures/pdf/extraction-rejection.js";
import { compressionBombPdf, hugeTextPagePdf } from "../fixtures/pdf/hostile-pdf.js";
import { makePdf, textPages } from "../fixtures/pdf/make-pdf.js";

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "sciencegate-pdf-"));
}

/** Writes a PDF of the given pages into a fresh folder. */
function writePdf(
  pages: Parameters<typeof makePdf>[0],
  name = "paper.pdf",
): { dir: string; pdfPath: string } {
  const dir = tempDir();
  const pdfPath = join(dir, name);
  writeFileSync(pdfPath, makePdf(pages));
  return { dir, pdfPath };
}

/** This file tests the pdf.js backend; extract-pdf-backends.test.ts runs both backends side by side. */
const PDFJS = { extractor: "pdfjs" } as const;

/** Four pages; page 3 draws a rectangle but has no text. */
const MIXED = [
  ["Abstract: BRCA1 (and BRCA2) variants."],
  ["Methods line one", "Methods line two"],
  [],
  ["Results."],
];

describe("extractPdf", () => {
  test("writes a ## Page N section per page and a manifest with exactly the documented fields", async () => {
    const { dir, pdfPath } = writePdf(MIXED);
    const outDir = join(dir, "out");
    const result = await extractPdf({ pdfPath, outDir, id: "p1" }, {}, PDFJS);

    expect(result).toEqual({
      textPath: join(outDir, "fulltext.md"),
      manifestPath: join(outDir, "manifest.json"),
      pageCount: 4,
      warnings: [expect.stringContaining("page 3")],
      inputSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const text = readFileSync(result.textPath, "utf8");
    expect(text.match(/^## Page \d+$/gm)).toEqual(["## Page 1", "## Page 2", "## Page 3", "## Page 4"]);
    expect(text).toContain("## Page 1\n\nAbstract: BRCA1 (and BRCA2) variants.");
    expect(text).toMatch(/## Page 2\n\nMethods line one\nMethods line two\n/);

    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as PdfManifest;
    expect(Object.keys(manifest).sort()).toEqual(
      [
        "schemaVersion",
        "parser",
        "inputSha256",
        "pdfBytes",
        "pageCount",
        "textCharacters",
        "pages",
        "limits",
        "warnings",
      ].sort(),
    );
    expect(manifest).toMatchObject({
      schemaVersion: 1,
      parser: expect.stringMatching(/^pdfjs-dist 5\.6\./),
      inputSha256: result.inputSha256,
      pdfBytes: statSync(pdfPath).size,
      pageCount: 4,
      limits: DEFAULT_PDF_LIMITS,
      warnings: result.warnings,
    });
    expect(manifest.pages.map((p) => [p.page, p.needsVision])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, false],
    ]);
    expect(manifest.pages[2]?.textCharacters).toBe(0);
    expect(manifest.textCharacters).toBe(manifest.pages.reduce((sum, p) => sum + p.textCharacters, 0));
    expect(manifest.pages[0]?.textCharacters).toBe("Abstract: BRCA1 (and BRCA2) variants.".length);
    // Atomic writes leave no temp files behind.
    expect((await readdir(outDir)).sort()).toEqual(["fulltext.md", "manifest.json"]);
  });

  test("is idempotent: a second call with the same bytes returns the earlier result without rewriting it", async () => {
    const { dir, pdfPath } = writePdf(textPages(3));
    const outDir = join(dir, "out");
    const first = await extractPdf({ pdfPath, outDir }, {}, PDFJS);
    const before = statSync(first.manifestPath).mtimeMs;
    const textBefore = statSync(first.textPath).mtimeMs;
    const second = await extractPdf({ pdfPath, outDir }, {}, PDFJS);
    expect(second).toEqual(first);
    expect(statSync(first.manifestPath).mtimeMs).toBe(before);
    expect(statSync(first.textPath).mtimeMs).toBe(textBefore);

    // Different bytes at the same path are extracted again.
    writeFileSync(pdfPath, makePdf(textPages(2)));
    const third = await extractPdf({ pdfPath, outDir }, {}, PDFJS);
    expect(third.pageCount).toBe(2);
    expect(third.inputSha256).not.toBe(first.inputSha256);
    expect(readFileSync(third.textPath, "utf8")).not.toContain("## Page 3");
  });

  test.each([
    ["an HTML page", "<!doctype html><html><body>Paywall</body></html>"],
    ["an empty file", ""],
    ["a JSON error body", '{"error":"not found"}'],
  ])("refuses %s with INVALID_INPUT and writes nothing", async (_label, content) => {
    const dir = tempDir();
    const pdfPath = join(dir, "fake.pdf");
    writeFileSync(pdfPath, content);
    const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, PDFJS));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("is not a PDF");
    expect(await readdir(dir)).toEqual(["fake.pdf"]);
  });

  test.each([
    ["maxPages", { maxPages: 3 }, textPages(5), "RESPONSE_TOO_LARGE"],
    ["maxCharacters", { maxCharacters: 100 }, textPages(4), "RESPONSE_TOO_LARGE"],
    ["maxBytes", { maxBytes: 500 }, textPages(4), "RESPONSE_TOO_LARGE"],
    // No real PDF parses within 1 ms of starting a worker thread.
    ["timeoutMs", { timeoutMs: 1 }, textPages(4), "TIMEOUT"],
  ] as const)("stops a PDF over the %s bound with an error naming it", async (limit, limits, pages, code) => {
    const { dir, pdfPath } = writePdf(pages);
    const outDir = join(dir, "out");
    const error = await rejection(extractPdf({ pdfPath, outDir }, limits, PDFJS));
    expect(error.code).toBe(code);
    expect(error.message).toContain(limit);
    expect(error.data).toMatchObject({ limit, max: Object.values(limits)[0] });
    expect(await readdir(dir)).toEqual(["paper.pdf"]);
  });

  test("the same PDF passes once the bound allows it", async () => {
    const { dir, pdfPath } = writePdf(textPages(5));
    const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, { maxPages: 5 }, PDFJS);
    expect(result.pageCount).toBe(5);
    expect(result.warnings).toEqual([]);
  });

  test("a corrupt PDF is a NORMALIZATION_FAILED error, not a crash", async () => {
    const dir = tempDir();
    const pdfPath = join(dir, "broken.pdf");
    writeFileSync(pdfPath, "%PDF-1.4\nthis is not a real document\n%%EOF\n");
    const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, PDFJS));
    expect(error.code).toBe("NORMALIZATION_FAILED");
  });

  describe("memory and text bounds on hostile PDFs", () => {
    const MiB = 1024 * 1024;
    function writeBytes(bytes: Buffer): { dir: string; pdfPath: string } {
      const dir = tempDir();
      const pdfPath = join(dir, "hostile.pdf");
      writeFileSync(pdfPath, bytes);
      return { dir, pdfPath };
    }

    test("a FlateDecode stream inflating past half of maxMemoryBytes is refused; within budget it extracts", async () => {
      // 66 KB on disk, 64 MiB inflated.
      const { dir, pdfPath } = writeBytes(compressionBombPdf({ decodedBytes: 64 * MiB }));
      const error = await rejection(
        extractPdf({ pdfPath, outDir: join(dir, "out") }, { maxMemoryBytes: 32 * MiB }, PDFJS),
      );
      expect(error.code).toBe("RESPONSE_TOO_LARGE");
      expect(error.message).toContain("maxMemoryBytes");
      // The stream cap (half the budget) usually stops it; on a loaded machine the resident-memory watchdog,
      // sampling every 25 ms, may see the inflation first. Either way it is this limit, and nothing is written.
      expect(error.message).toMatch(/inflates to more than 16777216 bytes|resident memory grew by/);
      expect(error.data).toMatchObject({ limit: "maxMemoryBytes", max: 32 * MiB });
      expect(await readdir(dir)).toEqual(["hostile.pdf"]);

      const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, PDFJS);
      expect(readFileSync(result.textPath, "utf8")).toContain("Compression bomb");
    });

    test("a stream pdf.js decodes itself, synchronously, is stopped by the resident-memory watchdog", async () => {
      // RunLengthDecode never reaches DecompressionStream: 2 MiB on disk, 128 MiB decoded in one loop.
      const bomb = compressionBombPdf({ decodedBytes: 128 * MiB, filter: "RunLengthDecode" });
      const { dir, pdfPath } = writeBytes(bomb);
      const limits = { maxMemoryBytes: 64 * MiB };
      const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, limits, PDFJS));
      expect(error.code).toBe("RESPONSE_TOO_LARGE");
      expect(error.message).toMatch(
        /maxMemoryBytes limit \(64 MiB\): the process's resident memory grew by \d+ MiB/,
      );
      expect(error.data).toMatchObject({ limit: "maxMemoryBytes", max: 64 * MiB });
      expect((error.data as { actual: number }).actual).toBeGreaterThan(64 * MiB);
    });

    test("the character limit stops a single huge page as its text arrives", async () => {
      // 20,000 lines of 80 characters on one page; the limit is crossed within the first few hundred.
      const { dir, pdfPath } = writeBytes(hugeTextPagePdf(20_000));
      const error = await rejection(
        extractPdf({ pdfPath, outDir: join(dir, "out") }, { maxCharacters: 10_000 }, PDFJS),
      );
      expect(error.code).toBe("RESPONSE_TOO_LARGE");
      expect(error.data).toMatchObject({ limit: "maxCharacters", max: 10_000 });
      // Counted as the text streamed in, not after the page's 1.6 M characters were all collected.
      expect((error.data as { actual: number }).actual).toBeLessThan(20_000);
    });
  });

  test("rejects a non-positive limit", async () => {
    const { dir, pdfPath } = writePdf(textPages(1));
    const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, { maxPages: 0 }, PDFJS));
    expect(error).toMatchObject({ code: "INVALID_INPUT", data: { limit: "maxPages" } });
  });
});
