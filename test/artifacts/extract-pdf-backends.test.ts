/**
 * Both extraction backends on the same PDFs: pdf.js in a warm worker and `pdftotext` (poppler-utils).
 * The pdftotext half is skipped, visibly, where the binary is not on the PATH.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { extractPdf, type PdfExtractor } from "../../src/artifacts/extract-pdf.js";
import type { PdfManifest } from "../../src/artifacts/pdf-manifest.js";
import { findPdftotext } from "../../src/artifacts/pdf-pdftotext.js";
import { PdfWorkerPool } from "../../src/artifacts/pdf-worker-pool.js";
import { rejection } from "../fixtures/pdf/extraction-rejection.js";
import { makePdf, textPages } from "../fixtures/pdf/make-pdf.js";

const pdftotext = await findPdftotext();
const pool = new PdfWorkerPool();
afterAll(() => pool.close());

function writePdf(bytes: Buffer, name = "paper.pdf"): { dir: string; pdfPath: string } {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-pdf-backends-"));
  const pdfPath = join(dir, name);
  writeFileSync(pdfPath, bytes);
  return { dir, pdfPath };
}

const MIXED = [
  ["Abstract: BRCA1 (and BRCA2) variants."],
  ["Methods line one", "Methods line two"],
  [],
  ["Results."],
];

const BACKENDS: [PdfExtractor, boolean][] = [
  ["pdfjs", true],
  ["pdftotext", pdftotext !== undefined],
];

for (const [extractor, available] of BACKENDS) {
  const reason = available ? "" : " (SKIPPED: pdftotext not on the PATH; apt-get install poppler-utils)";
  describe.skipIf(!available)(`extractPdf with extractor "${extractor}"${reason}`, () => {
    const options = { extractor, pool };

    test("writes the same pages, text and needsVision flags as the contract says", async () => {
      const { dir, pdfPath } = writePdf(makePdf(MIXED));
      const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, options);
      const text = readFileSync(result.textPath, "utf8");
      expect(text).toBe(
        "## Page 1\n\nAbstract: BRCA1 (and BRCA2) variants.\n\n" +
          "## Page 2\n\nMethods line one\nMethods line two\n\n" +
          "## Page 3\n\n<!-- no extractable text: needs vision -->\n\n" +
          "## Page 4\n\nResults.\n",
      );
      const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as PdfManifest;
      expect(manifest.parser).toMatch(extractor === "pdfjs" ? /^pdfjs-dist 5\./ : /^pdftotext \d+\./);
      expect(manifest.pages.map((p) => [p.page, p.textCharacters, p.needsVision])).toEqual([
        [1, 37, false],
        [2, 33, false],
        [3, 0, true],
        [4, 8, false],
      ]);
      expect(result.warnings).toEqual([expect.stringContaining("page 3")]);
    });

    test("a 60-page document comes back page by page, in order", async () => {
      const { dir, pdfPath } = writePdf(makePdf(textPages(60, 5)));
      const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, options);
      expect(result.pageCount).toBe(60);
      const text = readFileSync(result.textPath, "utf8");
      expect(text).toContain("## Page 60\n\nPage 60 line 1: mitochondrial assay results.");
      expect(text.match(/^## Page \d+$/gm)?.length).toBe(60);
    });

    test.each([
      ["maxPages", { maxPages: 3 }, () => makePdf(textPages(5)), "RESPONSE_TOO_LARGE"],
      ["maxCharacters", { maxCharacters: 100 }, () => makePdf(textPages(4)), "RESPONSE_TOO_LARGE"],
      ["maxCharacters", { maxCharacters: 10_000 }, () => makePdf(textPages(50, 40)), "RESPONSE_TOO_LARGE"],
      ["timeoutMs", { timeoutMs: 1 }, () => makePdf(textPages(40)), "TIMEOUT"],
    ] as const)(
      "stops a PDF over the %s bound (%j) with the same error",
      async (limit, limits, build, code) => {
        const { dir, pdfPath } = writePdf(build());
        const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, limits, options));
        expect(error.code, error.message).toBe(code);
        expect(error.message).toContain(limit);
        expect(error.data).toMatchObject({ limit, max: Object.values(limits)[0] });
        expect(await readdir(dir)).toEqual(["paper.pdf"]);
      },
    );

    test("a corrupt PDF is NORMALIZATION_FAILED, and the next file still extracts", async () => {
      const { dir, pdfPath } = writePdf(Buffer.from("%PDF-1.4\nthis is not a real document\n%%EOF\n"));
      const error = await rejection(extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, options));
      expect(error.code).toBe("NORMALIZATION_FAILED");
      const good = writePdf(makePdf(textPages(2)));
      const result = await extractPdf({ pdfPath: good.pdfPath, outDir: join(good.dir, "out") }, {}, options);
      expect(result.pageCount).toBe(2);
    });

    test("a file name full of shell syntax is data, not a command", async () => {
      const { dir, pdfPath } = writePdf(
        makePdf(textPages(1)),
        "a; touch pwned $(touch pwned2) `touch pwned3`.pdf",
      );
      const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, options);
      expect(result.pageCount).toBe(1);
      expect((await readdir(dir)).filter((f) => f.startsWith("pwned"))).toEqual([]);
      expect(existsSync(join(process.cwd(), "pwned"))).toBe(false);
    });
  });
}

describe.skipIf(pdftotext === undefined)(
  `choosing the backend${pdftotext ? "" : " (SKIPPED: pdftotext not on the PATH; apt-get install poppler-utils)"}`,
  () => {
    test("auto picks pdftotext when it is on the PATH", async () => {
      const { dir, pdfPath } = writePdf(makePdf(textPages(2)));
      const result = await extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, { pool });
      const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as PdfManifest;
      expect(manifest.parser).toMatch(/^pdftotext /);
    });

    test("a named extractor does not reuse the other one's extraction; auto takes either", async () => {
      const { dir, pdfPath } = writePdf(makePdf(textPages(2)));
      const outDir = join(dir, "out");
      await extractPdf({ pdfPath, outDir }, {}, { extractor: "pdftotext" });
      const parser = () =>
        (JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8")) as PdfManifest).parser;
      await extractPdf({ pdfPath, outDir }, {}, { extractor: "pdfjs", pool });
      expect(parser()).toMatch(/^pdfjs-dist /);
      await extractPdf({ pdfPath, outDir }, {}, { pool });
      expect(parser()).toMatch(/^pdfjs-dist /);
    });
  },
);

describe("without a pdftotext binary", () => {
  const missing = "/nonexistent/bin/pdftotext";

  test("auto falls back to pdf.js", async () => {
    const { dir, pdfPath } = writePdf(makePdf(textPages(2)));
    const result = await extractPdf(
      { pdfPath, outDir: join(dir, "out") },
      {},
      { pdftotextPath: missing, pool },
    );
    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8")) as PdfManifest;
    expect(manifest.parser).toMatch(/^pdfjs-dist /);
  });

  test("extractor pdftotext is INVALID_CONFIG naming the binary and the fix", async () => {
    const { dir, pdfPath } = writePdf(makePdf(textPages(2)));
    const error = await rejection(
      extractPdf(
        { pdfPath, outDir: join(dir, "out") },
        {},
        { extractor: "pdftotext", pdftotextPath: missing },
      ),
    );
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.message).toContain(missing);
    expect(error.message).toContain("apt-get install poppler-utils");
  });

  test("an unknown extractor is INVALID_INPUT listing the accepted ones", async () => {
    const { dir, pdfPath } = writePdf(makePdf(textPages(1)));
    const error = await rejection(
      extractPdf({ pdfPath, outDir: join(dir, "out") }, {}, { extractor: "poppler" as PdfExtractor }),
    );
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain('"auto", "pdfjs" or "pdftotext"');
  });
});
