/**
 * Where an extraction's text lives, `<dataDir>/papers/<jobId>/fulltext.md`, and how it is read back for
 * a client: bounded by the extraction's own character limit, and never through a symbolic link (each
 * folder below the data directory is `lstat`ed, the file is opened with `O_NOFOLLOW` and checked by its
 * handle, and the folder's real path is checked after the open).
 */
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { GovernanceError } from "../core/index.js";
import { DEFAULT_PDF_LIMITS } from "./pdf-limits.js";

/** The folder of the data directory that holds one folder per extracted download job. */
export const PAPERS_DIR_NAME = "papers";

/** The text file of an extraction (a `## Page N` section per page). */
export const PAPER_TEXT_FILE_NAME = "fulltext.md";

// O_NOFOLLOW is absent on Windows, where creating a symbolic link needs elevated rights anyway.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
/** A job id that is one plain path segment (a UUID, or what a job store's `newId` gave). */
const PLAIN_JOB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
/** Room for the `## Page N` headings next to the text itself. */
const HEADINGS_BYTES = 64 * 1024;

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
  const refuse = (why: string, cause?: unknown) =>
    new GovernanceError(
      "INVALID_INPUT",
      `Refused to read the extraction of '${artifactJobId}': ${why}; extractions are never read through links.`,
      { cause, data: { artifactJobId } },
    );
  if (!PLAIN_JOB_ID.test(artifactJobId)) throw refuse("a job id is one plain name");
  const maxBytes = 3 * (options.maxCharacters ?? DEFAULT_PDF_LIMITS.maxCharacters) + HEADINGS_BYTES;
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
    file = await open(paperTextPath(root, artifactJobId), constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw missing(artifactJobId);
    if (code === "ELOOP" || code === "EMLINK")
      throw refuse(`${PAPER_TEXT_FILE_NAME} is a symbolic link`, error);
    throw error;
  }
  try {
    const info = await file.stat();
    if (!info.isFile()) throw refuse(`${PAPER_TEXT_FILE_NAME} is not a regular file`);
    // A folder swapped for a link between its check and the open is caught here.
    if ((await realpath(folder).catch(() => undefined)) !== folder) throw refuse("its folder moved");
    if (info.size > maxBytes) throw tooLarge(artifactJobId, info.size, maxBytes);
    const bytes = await readAtMost(file, maxBytes);
    if (bytes === undefined) throw tooLarge(artifactJobId, maxBytes + 1, maxBytes);
    return new TextDecoder().decode(bytes);
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

function tooLarge(artifactJobId: string, size: number, maxBytes: number): GovernanceError {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `The extraction of '${artifactJobId}' is ${size} bytes, over the ${maxBytes}-byte bound of its character limit; not read.`,
    { data: { artifactJobId, limit: "maxCharacters", max: maxBytes, actual: size } },
  );
}
