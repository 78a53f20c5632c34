import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Clock } from "../core/index.js";
import {
  canonicalJson,
  GovernanceError,
  makePrivateDir,
  PRIVATE_FILE_MODE,
  sha256Hex,
} from "../core/index.js";
import { PAPER_MANIFEST_FILE_NAME, PAPER_TEXT_FILE_NAME } from "./paper-text.js";
import { type PdfLimits, resolvePdfLimits } from "./pdf-limits.js";
import { buildPdfExtraction, type PdfManifest } from "./pdf-manifest.js";
import { findPdftotext, isExecutable, runPdftotext } from "./pdf-pdftotext.js";
import type { PdfWorkerPool } from "./pdf-worker-pool.js";
import { type PdfWorkerOutput, runPdfWorker } from "./pdf-worker-runner.js";

/** What to extract and where. */
export interface ExtractPdfInput {
  /** The PDF file. */
  pdfPath: string;
  /** Folder that receives `fulltext.md` and `manifest.json` (created when missing). */
  outDir: string;
  /** A label for messages (paper id); defaults to the file name. */
  id?: string;
}

/**
 * Which parser reads the PDF: `pdfjs` (pdf.js in a warm worker thread, always there), `pdftotext`
 * (poppler-utils' binary, faster; must be installed), or `auto`: `pdftotext` when one is found, else
 * `pdfjs`. Both give one text per page and the same `needsVision` rule (a page without text); their
 * text differs in spacing and, on multi-column pages, in order.
 */
export type PdfExtractor = "auto" | "pdfjs" | "pdftotext";

/** Seams of `extractPdf`. */
export interface ExtractPdfOptions {
  /** Times the wall-clock bound. @default systemClock */
  clock?: Clock;
  /** The parser (see `PdfExtractor`). @default "auto" */
  extractor?: PdfExtractor;
  /** The `pdftotext` binary. @default the first `pdftotext` on the `PATH` */
  pdftotextPath?: string;
  /** The warm pdf.js workers. @default sharedPdfWorkerPool() */
  pool?: PdfWorkerPool;
}

const EXTRACTORS: readonly PdfExtractor[] = ["auto", "pdfjs", "pdftotext"];

/** The binary to run, or `undefined` for pdf.js. */
async function chooseBackend(options: ExtractPdfOptions): Promise<string | undefined> {
  const extractor = options.extractor ?? "auto";
  if (!EXTRACTORS.includes(extractor)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Unknown PDF extractor '${String(extractor)}': use "auto", "pdfjs" or "pdftotext".`,
      { data: { extractor } },
    );
  }
  if (extractor === "pdfjs") return undefined;
  const binary =
    options.pdftotextPath === undefined
      ? await findPdftotext()
      : (await isExecutable(options.pdftotextPath))
        ? options.pdftotextPath
        : undefined;
  if (binary === undefined && extractor === "pdftotext") {
    const where = options.pdftotextPath ?? "pdftotext on the PATH";
    throw new GovernanceError(
      "INVALID_CONFIG",
      `PDF extractor "pdftotext" needs ${where}, which is missing or not executable: install poppler-utils ` +
        `(apt-get install poppler-utils), or use extractor "auto" or "pdfjs".`,
      { data: { extractor, pdftotextPath: options.pdftotextPath } },
    );
  }
  return binary;
}

/** The outcome of an extraction (or of the earlier one it found). */
export interface ExtractPdfResult {
  textPath: string;
  manifestPath: string;
  pageCount: number;
  warnings: string[];
  inputSha256: string;
}

const PDF_SIGNATURE = "%PDF-";
/** PDF readers accept the signature anywhere in the first KiB (leading junk is common). */
const SIGNATURE_WINDOW = 1024;

/**
 * Whether a file starts like a PDF: `%PDF-` within its first KiB, as PDF readers accept it.
 * @param pdfPath the file
 * @returns `true` for a PDF signature; `false` otherwise, also for a missing or unreadable file
 */
export async function hasPdfSignature(pdfPath: string): Promise<boolean> {
  try {
    const handle = await open(pdfPath, "r");
    try {
      const head = Buffer.alloc(SIGNATURE_WINDOW);
      const { bytesRead } = await handle.read(head, 0, SIGNATURE_WINDOW, 0);
      return head.subarray(0, bytesRead).includes(PDF_SIGNATURE, 0, "latin1");
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

async function checkSignature(pdfPath: string, label: string): Promise<void> {
  if (!(await hasPdfSignature(pdfPath))) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `${label} is not a PDF: no '%PDF-' signature in its first ${SIGNATURE_WINDOW} bytes.`,
      { data: { pdfPath } },
    );
  }
}

async function readExisting(
  manifestPath: string,
  textPath: string,
  sha: string,
  limits: PdfLimits,
  extractor: PdfExtractor,
): Promise<PdfManifest | undefined> {
  try {
    const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as PdfManifest;
    await stat(textPath);
    const same = manifest.inputSha256 === sha && canonicalJson(manifest.limits) === canonicalJson(limits);
    // `auto` takes what either parser wrote; a named one only its own text.
    const parser = extractor === "pdfjs" ? "pdfjs-dist" : "pdftotext";
    return same && (extractor === "auto" || manifest.parser.startsWith(parser)) ? manifest : undefined;
  } catch {
    return undefined; // absent or unreadable: extract again and overwrite
  }
}

/**
 * Extracts the text of a PDF with pdf.js in a warm worker thread, or with `pdftotext` (see
 * `PdfExtractor`), under hard bounds, writing
 * `<outDir>/fulltext.md` (a `## Page N` section per page) and `<outDir>/manifest.json` (a missing
 * `outDir` is made 0700, the files 0600).
 * Idempotent: when `outDir` already holds an extraction of the same bytes under the same limits it is
 * returned as is, without running the parser.
 * @param input the PDF, the output folder and an optional id for messages
 * @param limits bounds; absent ones default to 50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s
 * @param options the clock for the wall-time bound, the parser, the `pdftotext` binary, the worker pool
 * @returns the output paths, page count, warnings and the input's SHA-256
 * @throws GovernanceError `INVALID_INPUT` for a non-PDF, a bad limit or an unknown extractor,
 *   `INVALID_CONFIG` for `extractor: "pdftotext"` without the binary, `NOT_FOUND` for a missing file,
 *   `RESPONSE_TOO_LARGE` when `maxBytes`, `maxPages`, `maxCharacters` or `maxMemoryBytes` is crossed
 *   (data.limit names it),
 *   `TIMEOUT` when `timeoutMs` passes, `NORMALIZATION_FAILED` when the parser cannot read the file
 * @example
 * const { textPath, pageCount } = await extractPdf({ pdfPath: "paper.pdf", outDir: "papers/p1" });
 */
export async function extractPdf(
  input: ExtractPdfInput,
  limits: Partial<PdfLimits> = {},
  options: ExtractPdfOptions = {},
): Promise<ExtractPdfResult> {
  const bounds = resolvePdfLimits(limits);
  const binary = await chooseBackend(options);
  const label = input.id ?? basename(input.pdfPath);
  const size = await stat(input.pdfPath).then(
    (s) => s.size,
    (cause: unknown) => {
      throw new GovernanceError("NOT_FOUND", `Cannot read PDF ${input.pdfPath}: ${String(cause)}`, { cause });
    },
  );
  if (size > bounds.maxBytes) {
    throw new GovernanceError(
      "RESPONSE_TOO_LARGE",
      `PDF ${label} exceeds the maxBytes limit: ${size} bytes > ${bounds.maxBytes}; not read.`,
      { data: { limit: "maxBytes", max: bounds.maxBytes, actual: size } },
    );
  }
  await checkSignature(input.pdfPath, label);
  const bytes = await readFile(input.pdfPath);
  const inputSha256 = sha256Hex(bytes);
  const textPath = join(input.outDir, PAPER_TEXT_FILE_NAME);
  const manifestPath = join(input.outDir, PAPER_MANIFEST_FILE_NAME);
  const existing = await readExisting(
    manifestPath,
    textPath,
    inputSha256,
    bounds,
    options.extractor ?? "auto",
  );
  if (existing) {
    return {
      textPath,
      manifestPath,
      pageCount: existing.pageCount,
      warnings: existing.warnings,
      inputSha256,
    };
  }

  const clock = options.clock ? { clock: options.clock } : {};
  const { parser, pages }: PdfWorkerOutput =
    binary === undefined
      ? await runPdfWorker(new Uint8Array(bytes), bounds, {
          label,
          ...clock,
          ...(options.pool ? { pool: options.pool } : {}),
        })
      : await runPdftotext(bytes, bounds, { binary, label, ...clock });
  const { fulltext, manifest } = buildPdfExtraction({
    parser,
    inputSha256,
    pdfBytes: size,
    limits: bounds,
    pages,
  });
  await makePrivateDir(input.outDir);
  // The manifest goes last: its presence with this sha marks a complete extraction.
  await writeFileAtomic(textPath, fulltext);
  await writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return { textPath, manifestPath, pageCount: manifest.pageCount, warnings: manifest.warnings, inputSha256 };
}

/**
 * Writes a file (mode 0600: an extraction is the user's alone) so readers see either the old content
 * or the whole new content, never a part:
 * a temp file in the same folder, then `rename` (atomic on one file system).
 * @param path the final path
 * @param content the text to write
 * @returns when the file is in place
 * @throws the file system's error (the temp file is removed)
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temp, content, { flag: "wx", mode: PRIVATE_FILE_MODE });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
