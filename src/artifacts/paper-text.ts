/**
 * Where an extraction's text and manifest live, `<dataDir>/papers/<jobId>/fulltext.md` and
 * `manifest.json`, and how they are read back for a client: bounded (the text by the extraction's own
 * character limit), and never through a symbolic link (each folder below the data directory is
 * `lstat`ed, the file is opened with `O_NOFOLLOW` and checked by its handle, and the folder's real path
 * is checked after the open).
 */
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { GovernanceError } from "../core/index.js";
import { DEFAULT_PDF_LIMITS } from "./pdf-limits.js";
import type { PdfManifest } from "./pdf-manifest.js";

/** The folder of the data directory that holds one folder per extracted download job. */
export const PAPERS_DIR_NAME = "papers";

/** The text file of an extraction (a `## Page N` section per page). */
export const PAPER_TEXT_FILE_NAME = "fulltext.md";

/** The manifest of an extraction (`PdfManifest`). */
export const PAPER_MANIFEST_FILE_NAME = "manifest.json";

// O_NOFOLLOW is absent on Windows, where creating a symbolic link needs elevated rights anyway.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** A job id that is one plain path segment (a UUID, or what a job store's `newId` gave). */
const PLAIN_JOB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
/** Room for the `## Page N` headings next to the text itself. */
const HEADINGS_BYTES = 64 * 1024;
/** A manifest is about 80 bytes per page: 4 MiB is far more than any page limit yields. */
const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The folder an extraction of a download job writes to.
 * @param dataDir the data directory
 * @param artifactJobId the download job
 * @returns `<dataDir>/papers/<jobId>`
 */
export function paperFolder(dataDir: string, artifactJobId: string): string {
  return join(dataDir, PAPERS_DIR_NAME, artifactJobId);
}

/**
 * The text file of an extraction of a download job.
 * @param dataDir the data directory
 * @param artifactJobId the download job
 * @returns `<dataDir>/papers/<jobId>/fulltext.md`
 */
export function paperTextPath(dataDir: string, artifactJobId: string): string {
  return join(paperFolder(dataDir, artifactJobId), PAPER_TEXT_FILE_NAME);
}

/** Options of {@link readPaperText}. */
export interface ReadPaperTextOptions {
  /** The extraction's character bound; the file may hold 3 UTF-8 bytes per character. @default 20_000_000 */
  maxCharacters?: number | undefined;
}

/**
 * Reads the text of an extraction.
 * @param dataDir the data directory the extraction wrote into (it may itself be reached through links)
 * @param artifactJobId the download job whose PDF was extracted
 * @param options the character bound
 * @returns the Markdown text
 * @throws GovernanceError `INVALID_INPUT` for a job id that is not one plain name, or when `papers`, the
 *   job's folder or the file is a symbolic link or not what it should be; `NOT_FOUND` when there is no
 *   extraction; `RESPONSE_TOO_LARGE` when the file is larger than the bound allows
 * @example
 * const text = await readPaperText(governance.dataDir, result.artifactJobId);
 */
export async function readPaperText(
  dataDir: string,
  artifactJobId: string,
  options: ReadPaperTextOptions = {},
): Promise<string> {
  const maxBytes = 3 * (options.maxCharacters ?? DEFAULT_PDF_LIMITS.maxCharacters) + HEADINGS_BYTES;
  const bytes = await readPaperFile(dataDir, artifactJobId, PAPER_TEXT_FILE_NAME, maxBytes, "maxCharacters");
  return new TextDecoder().decode(bytes);
}

/**
 * Reads the manifest of an extraction (`<dataDir>/papers/<jobId>/manifest.json`: parser, page count,
 * characters, which pages need vision), with the same checks as {@link readPaperText}.
 * @param dataDir the data directory the extraction wrote into
 * @param artifactJobId the download job whose PDF was extracted
 * @returns the manifest
 * @throws GovernanceError as `readPaperText` does (the bound is 4 MiB), and `INVALID_INPUT` when the
 *   file is not a manifest
 * @example
 * const { pageCount, pages } = await readPaperManifest(governance.dataDir, jobId);
 */
export async function readPaperManifest(dataDir: string, artifactJobId: string): Promise<PdfManifest> {
  const bytes = await readPaperFile(
    dataDir,
    artifactJobId,
    PAPER_MANIFEST_FILE_NAME,
    MANIFEST_MAX_BYTES,
    "manifestBytes",
  );
  let manifest: unknown;
  try {
    manifest = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw notAManifest(artifactJobId, error);
  }
  if (!isManifest(manifest)) throw notAManifest(artifactJobId);
  return manifest;
}

/** One file of an extraction's folder, at most `maxBytes`, never through a link. */
async function readPaperFile(
  dataDir: string,
  artifactJobId: string,
  fileName: string,
  maxBytes: number,
  limit: string,
): Promise<Uint8Array> {
  const refuse = (why: string, cause?: unknown) =>
    new GovernanceError(
      "INVALID_INPUT",
      `Refused to read the extraction of '${artifactJobId}': ${why}; extractions are never read through links.`,
      { cause, data: { artifactJobId } },
    );
  if (!PLAIN_JOB_ID.test(artifactJobId)) throw refuse("a job id is one plain name");
  const root = await realpath(resolve(dataDir)).catch(() => undefined);
  if (root === undefined) throw missing(artifactJobId);
  const folder = paperFolder(root, artifactJobId);
  for (const dir of [join(root, PAPERS_DIR_NAME), folder]) {
    const info = await lstat(dir).catch(() => undefined);
    if (info === undefined) throw missing(artifactJobId);
    if (info.isSymbolicLink()) throw refuse(`'${dir}' is a symbolic link`);
    if (!info.isDirectory()) throw refuse(`'${dir}' is not a folder`);
  }
  let file: FileHandle;
  try {
    file = await open(join(folder, fileName), constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw missing(artifactJobId);
    if (code === "ELOOP" || code === "EMLINK") throw refuse(`${fileName} is a symbolic link`, error);
    throw error;
  }
  try {
    const info = await file.stat();
    if (!info.isFile()) throw refuse(`${fileName} is not a regular file`);
    // A folder swapped for a link between its check and the open is caught here.
    if ((await realpath(folder).catch(() => undefined)) !== folder) throw refuse("its folder moved");
    if (info.size > maxBytes) throw tooLarge(artifactJobId, fileName, info.size, maxBytes, limit);
    const bytes = await readAtMost(file, maxBytes);
    if (bytes === undefined) throw tooLarge(artifactJobId, fileName, maxBytes + 1, maxBytes, limit);
    return bytes;
  } finally {
    await file.close();
  }
}

/** The file's bytes, or `undefined` when it holds more than `maxBytes` (it grew after its size was read). */
async function readAtMost(file: FileHandle, maxBytes: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const buffer = new Uint8Array(Math.min(1024 * 1024, maxBytes + 1 - total));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) return undefined;
  }
  return Buffer.concat(chunks, total);
}

function missing(artifactJobId: string): GovernanceError {
  return new GovernanceError(
    "NOT_FOUND",
    `No extraction of download job '${artifactJobId}': call paper_extract_pdf with its artifactJobId first.`,
    { data: { artifactJobId } },
  );
}

function tooLarge(
  artifactJobId: string,
  fileName: string,
  size: number,
  maxBytes: number,
  limit: string,
): GovernanceError {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `The ${fileName} of the extraction of '${artifactJobId}' is ${size} bytes, over the ${maxBytes}-byte bound of ${limit}; not read.`,
    { data: { artifactJobId, limit, max: maxBytes, actual: size } },
  );
}

function notAManifest(artifactJobId: string, cause?: unknown): GovernanceError {
  return new GovernanceError(
    "INVALID_INPUT",
    `The ${PAPER_MANIFEST_FILE_NAME} of the extraction of '${artifactJobId}' is not an extraction manifest; extract the paper again.`,
    { cause, data: { artifactJobId } },
  );
}

function isManifest(value: unknown): value is PdfManifest {
  const manifest = value as Partial<PdfManifest> | null;
  return (
    typeof manifest === "object" &&
    manifest !== null &&
    typeof manifest.parser === "string" &&
    typeof manifest.pageCount === "number" &&
    typeof manifest.textCharacters === "number" &&
    Array.isArray(manifest.warnings) &&
    Array.isArray(manifest.pages) &&
    manifest.pages.every(
      (page) =>
        typeof page === "object" &&
        page !== null &&
        typeof page.page === "number" &&
        typeof page.textCharacters === "number" &&
        typeof page.needsVision === "boolean",
    )
  );
}
