/**
 * PDF extraction benchmark: pages per second and per-file overhead of `extractPdf` with each backend
 * (pdf.js in a warm worker pool; `pdftotext` run by the backend) against `pdftotext` run directly, one
 * child process per file, on the same generated corpus of many small and a few large PDFs, in one run.
 * Without `pdftotext` its two sides are skipped.
 *
 * Per-file overhead is the fixed cost of a file, separated from the per-page cost by the two sizes:
 * per page = (large file time - small file time) / (large pages - small pages), overhead = small file
 * time - small pages x per page (medians). `BENCH_QUICK=1` runs a reduced corpus once.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { extractPdf as extractFromSource, type PdfExtractor } from "../src/artifacts/extract-pdf.js";
import { findPdftotext } from "../src/artifacts/pdf-pdftotext.js";
import { PdfWorkerPool as PoolFromSource } from "../src/artifacts/pdf-worker-pool.js";
import { makePdf, textPages } from "../test/fixtures/pdf/make-pdf.js";
import {
  type BenchMetric,
  type BenchRatio,
  type BenchResult,
  metricWithTarget,
  ratioOf,
} from "./lib/bench-result.js";

// Measure what users run: the compiled package (its worker loads plain .js). Under tsx from src/, a
// worker first registers tsx and transforms pdf.js, which measures the dev loader instead.
const compiledDir = new URL("../dist/artifacts/", import.meta.url);
const hasCompiled = existsSync(new URL("extract-pdf.js", compiledDir));
const extractPdf: typeof extractFromSource = hasCompiled
  ? ((await import(new URL("extract-pdf.js", compiledDir).href)) as { extractPdf: typeof extractFromSource })
      .extractPdf
  : extractFromSource;
const PdfWorkerPool: typeof PoolFromSource = hasCompiled
  ? (
      (await import(new URL("pdf-worker-pool.js", compiledDir).href)) as {
        PdfWorkerPool: typeof PoolFromSource;
      }
    ).PdfWorkerPool
  : PoolFromSource;

const run$ = promisify(execFile);

const QUICK = process.env.BENCH_QUICK === "1";
const SMALL_FILES = QUICK ? 12 : 60;
const SMALL_PAGES = 2;
const LARGE_FILES = QUICK ? 1 : 4;
const LARGE_PAGES = QUICK ? 100 : 150;
const LINES_PER_PAGE = 40;
/** Rounds per side; medians are reported, so one slow round does not decide a ratio. */
const ROUNDS = QUICK ? 1 : 3;
/** The target of the per-file overhead of the pdf.js backend. */
const OVERHEAD_TARGET_MS = 10;

interface CorpusFile {
  path: string;
  pages: number;
}

interface SideRound {
  pagesPerSecond: number;
  smallMs: number[];
  largeMs: number[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Extracts every file once, in an order that mixes sizes, timing each. */
async function timeRound(corpus: readonly CorpusFile[], one: (file: CorpusFile, i: number) => Promise<void>) {
  const round: SideRound = { pagesPerSecond: 0, smallMs: [], largeMs: [] };
  let pages = 0;
  const start = performance.now();
  for (const [i, file] of corpus.entries()) {
    const t = performance.now();
    await one(file, i);
    (file.pages === SMALL_PAGES ? round.smallMs : round.largeMs).push(performance.now() - t);
    pages += file.pages;
  }
  round.pagesPerSecond = (pages / (performance.now() - start)) * 1000;
  return round;
}

/** Pages/s (median of rounds) and the per-file overhead and per-page cost (medians of all files). */
function summarize(rounds: SideRound[]) {
  const small = median(rounds.flatMap((r) => r.smallMs));
  const large = median(rounds.flatMap((r) => r.largeMs));
  const perPage = (large - small) / (LARGE_PAGES - SMALL_PAGES);
  return {
    pagesPerSecond: median(rounds.map((r) => r.pagesPerSecond)),
    overheadMs: small - SMALL_PAGES * perPage,
    perPageMs: perPage,
  };
}

/**
 * Runs the benchmark: each round extracts the whole corpus with each side, interleaved.
 * @returns pages/s and per-file overhead of each side, and the ratios against pdftotext
 * @throws Error when an extraction fails or reports the wrong page count
 */
export async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-pdf-bench-"));
  const pool = new PdfWorkerPool();
  try {
    const corpus: CorpusFile[] = [];
    const add = (pages: number, i: number) => {
      const path = join(dir, `paper-${pages}-${i}.pdf`);
      writeFileSync(path, makePdf(textPages(pages, LINES_PER_PAGE)));
      corpus.push({ path, pages });
    };
    // The large files spread through the small ones, as a real batch would have them.
    for (let i = 0; i < SMALL_FILES; i++) {
      add(SMALL_PAGES, i);
      if ((i + 1) % Math.ceil(SMALL_FILES / LARGE_FILES) === 0) add(LARGE_PAGES, i);
    }
    while (corpus.filter((f) => f.pages === LARGE_PAGES).length < LARGE_FILES)
      add(LARGE_PAGES, corpus.length);
    const binary = await findPdftotext();
    const ours = (extractor: PdfExtractor, round: number) => async (file: CorpusFile, i: number) => {
      // A fresh folder each time, so idempotency never skips the work.
      const outDir = join(dir, `out-${extractor}-${round}-${i}`);
      const result = await extractPdf({ pdfPath: file.path, outDir }, {}, { extractor, pool });
      if (result.pageCount !== file.pages) throw new Error(`${extractor} saw ${result.pageCount} pages`);
    };
    // The first file pays for starting the worker and loading pdf.js; measured once, then warm.
    const coldStart = performance.now();
    await ours("pdfjs", -1)(corpus[0] as CorpusFile, 0);
    const coldMs = performance.now() - coldStart;
    const sides: Record<string, SideRound[]> = { pdfjs: [], pdftotextBackend: [], pdftotextDirect: [] };
    for (let round = 0; round < ROUNDS; round++) {
      sides.pdfjs?.push(await timeRound(corpus, ours("pdfjs", round)));
      if (!binary) continue;
      sides.pdftotextBackend?.push(await timeRound(corpus, ours("pdftotext", round)));
      sides.pdftotextDirect?.push(
        await timeRound(corpus, async (file, i) => {
          const out = join(dir, `poppler-${round}-${i}.txt`);
          await run$(binary, ["-enc", "UTF-8", "-eol", "unix", file.path, out]);
        }),
      );
    }
    const pdfjs = summarize(sides.pdfjs ?? []);
    const metrics: BenchMetric[] = [
      { name: "pdf.js backend (warm pool)", value: pdfjs.pagesPerSecond, unit: "pages/s" },
      metricWithTarget("pdf.js backend per-file overhead", pdfjs.overheadMs, "ms", OVERHEAD_TARGET_MS),
      { name: "pdf.js backend per page", value: pdfjs.perPageMs, unit: "ms" },
      { name: "pdf.js backend first file (worker start-up)", value: coldMs, unit: "ms" },
    ];
    const ratios: BenchRatio[] = [];
    const notes = [
      `Corpus: ${SMALL_FILES} files of ${SMALL_PAGES} pages and ${LARGE_FILES} of ${LARGE_PAGES} pages, ` +
        `${LINES_PER_PAGE} lines a page; pdf.js from ${hasCompiled ? "dist/ (compiled)" : "src/ through tsx"}.`,
      "extractPdf includes reading, hashing and writing fulltext.md and manifest.json; pdftotext direct " +
        "writes one .txt per file with the backend's arguments (-enc UTF-8 -eol unix).",
    ];
    if (binary) {
      const backend = summarize(sides.pdftotextBackend ?? []);
      const direct = summarize(sides.pdftotextDirect ?? []);
      metrics.push(
        { name: "pdftotext backend", value: backend.pagesPerSecond, unit: "pages/s" },
        { name: "pdftotext backend per-file overhead", value: backend.overheadMs, unit: "ms" },
        { name: "pdftotext direct", value: direct.pagesPerSecond, unit: "pages/s" },
        { name: "pdftotext direct per-file overhead", value: direct.overheadMs, unit: "ms" },
      );
      ratios.push(
        ratioOf(
          "pages/s: pdf.js backend / pdftotext direct",
          pdfjs.pagesPerSecond,
          direct.pagesPerSecond,
          "pages/s",
        ),
        ratioOf(
          "pages/s: pdftotext backend / pdftotext direct",
          backend.pagesPerSecond,
          direct.pagesPerSecond,
          "pages/s",
        ),
        ratioOf(
          "per-file overhead: pdf.js backend / pdftotext direct",
          pdfjs.overheadMs,
          direct.overheadMs,
          "ms",
        ),
        ratioOf(
          "per-file overhead: pdftotext backend / pdftotext direct",
          backend.overheadMs,
          direct.overheadMs,
          "ms",
        ),
      );
    } else {
      notes.push("pdftotext not found (apt-get install poppler-utils): its two sides skipped.");
      console.log("pdftotext not found: its two sides skipped.");
    }
    notes.push(`pool: ${JSON.stringify(pool.stats)}`);
    return {
      name: "pdf",
      description:
        "extractPdf with the pdf.js (warm worker pool) and pdftotext backends vs pdftotext run directly, " +
        "same generated PDFs, pages/s and per-file overhead",
      parameters: {
        smallFiles: SMALL_FILES,
        smallPages: SMALL_PAGES,
        largeFiles: LARGE_FILES,
        largePages: LARGE_PAGES,
        linesPerPage: LINES_PER_PAGE,
        rounds: ROUNDS,
        quick: QUICK,
      },
      metrics,
      ratios,
      notes,
    };
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
