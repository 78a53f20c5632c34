/**
 * PDF extraction benchmark (issue 8): pages per second of `extractPdf` (pdf.js in a bounded worker
 * thread, output files written) against `pdftotext` from poppler-utils (a child process per file) on
 * the same generated multi-page PDFs, in one run. Without `pdftotext` the baseline is skipped.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { extractPdf as extractFromSource } from "../src/artifacts/extract-pdf.js";
import { makePdf, textPages } from "../test/fixtures/pdf/make-pdf.js";
import { type BenchMetric, type BenchRatio, type BenchResult, ratioOf } from "./lib/bench-result.js";

// Measure what users run: the compiled package (its worker loads plain .js). Under tsx from src/, every
// worker would first register tsx and transform pdf.js, which measures the dev loader instead.
const compiled = new URL("../dist/artifacts/extract-pdf.js", import.meta.url);
const extractPdf: typeof extractFromSource = existsSync(compiled)
  ? ((await import(compiled.href)) as { extractPdf: typeof extractFromSource }).extractPdf
  : extractFromSource;

const run$ = promisify(execFile);

const FILES = 4;
const PAGES_PER_FILE = 50;
const LINES_PER_PAGE = 40;
/** Rounds per side; the median is reported, so one slow round does not decide the ratio. */
const ROUNDS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function hasPdftotext(): Promise<boolean> {
  try {
    await run$("pdftotext", ["-v"]);
    return true;
  } catch {
    return false;
  }
}

async function timeRound(files: readonly string[], extractOne: (file: string, i: number) => Promise<void>) {
  const start = performance.now();
  for (const [i, file] of files.entries()) await extractOne(file, i);
  return ((files.length * PAGES_PER_FILE) / (performance.now() - start)) * 1000;
}

/**
 * Runs the benchmark: each round extracts every file once with each tool, interleaved.
 * @returns pages/s of both sides and their ratio (ours / pdftotext)
 * @throws Error when an extraction fails or reports the wrong page count
 */
export async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-pdf-bench-"));
  try {
    const files = Array.from({ length: FILES }, (_, i) => {
      const path = join(dir, `paper-${i}.pdf`);
      writeFileSync(path, makePdf(textPages(PAGES_PER_FILE, LINES_PER_PAGE)));
      return path;
    });
    const baseline = await hasPdftotext();
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(
        await timeRound(files, async (pdfPath, i) => {
          // A fresh folder each time, so idempotency never skips the work.
          const result = await extractPdf({ pdfPath, outDir: join(dir, `out-${round}-${i}`) });
          if (result.pageCount !== PAGES_PER_FILE)
            throw new Error(`extractPdf saw ${result.pageCount} pages`);
        }),
      );
      if (baseline) {
        theirs.push(
          await timeRound(files, async (pdfPath, i) => {
            await run$("pdftotext", ["-layout", pdfPath, join(dir, `poppler-${round}-${i}.txt`)]);
          }),
        );
      }
    }
    const metrics: BenchMetric[] = [{ name: "extractPdf", value: median(ours), unit: "pages/s" }];
    const ratios: BenchRatio[] = [];
    const notes = [
      "extractPdf includes starting one worker thread per file (and, under tsx, registering tsx in it); " +
        "pdftotext includes spawning one process per file.",
    ];
    if (baseline) {
      metrics.push({ name: "pdftotext", value: median(theirs), unit: "pages/s" });
      ratios.push(ratioOf("pages/s: extractPdf / pdftotext", median(ours), median(theirs), "pages/s"));
    } else {
      notes.push("pdftotext not found (apt-get install poppler-utils): baseline skipped.");
      console.log("pdftotext not found: baseline skipped.");
    }
    return {
      name: "pdf",
      description: "extractPdf (pdf.js in a bounded worker) vs pdftotext, same generated PDFs, pages/s",
      parameters: {
        files: FILES,
        pagesPerFile: PAGES_PER_FILE,
        linesPerPage: LINES_PER_PAGE,
        rounds: ROUNDS,
      },
      metrics,
      ratios,
      notes,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
