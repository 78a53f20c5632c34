/**
 * Where a download may land: a relative path inside the workspace, with no `..`, no symlink on the
 * way and no existing file at the end (a finished download is immutable, so it is never replaced).
 * The checks run twice: when the download is planned, and again component by component when a
 * folder is created or used, since a folder may be swapped for a link in between.
 */
import { lstat, mkdir, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ArtifactCandidate } from "../contract/index.js";
import { GovernanceError, makePrivateDir, PRIVATE_DIR_MODE } from "../core/index.js";

/** Folder inside the workspace that holds partial files; no destination may point there. */
export const STAGING_DIR_NAME = ".staging";

/** Longest file or folder name most file systems accept (ext4, APFS, NTFS: 255), in UTF-8 bytes. */
export const MAX_SEGMENT_BYTES = 255;

/**
 * Longest absolute destination path accepted, in UTF-8 bytes. Linux's PATH_MAX is 4096 including the
 * terminating NUL; this is a conservative margin under it, so a path that plans fine also opens fine.
 */
export const MAX_PATH_BYTES = 4000;

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** A checked destination. */
export interface DownloadDestination {
  /** Normalized relative path with `/` separators, e.g. `downloads/arxiv/2401.00001v1.pdf`. */
  relativePath: string;
  /** Absolute path inside the workspace. */
  finalPath: string;
}

/**
 * The default relative destination of a candidate: `downloads/<sourceId>/<file name>`.
 * @param candidate the artifact candidate
 * @returns a relative path made of safe characters only
 */
export function defaultDestination(candidate: ArtifactCandidate): string {
  const base = candidate.filename ?? `${candidate.sourceRecordId}.${candidate.format}`;
  const safe = base.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "_");
  return `downloads/${candidate.sourceId.replace(/[^a-z0-9-]+/g, "_")}/${safe || candidate.candidateId}`;
}

/**
 * A destination as `checkDestination` normalizes it (no empty or `.` segments, `/` separators), without
 * checking it: what two spellings of one path have in common.
 * @param destinationPath a relative path
 * @returns the normalized path
 */
export function destinationKey(destinationPath: string): string {
  return destinationSegments(destinationPath).join("/");
}

function destinationSegments(destinationPath: string): string[] {
  return destinationPath.split(/[\\/]+/).filter((segment) => segment !== "" && segment !== ".");
}

/**
 * Checks a destination against the workspace.
 * @param workspaceDir the absolute workspace directory (`<dataDir>/workspace`)
 * @param destinationPath the caller's relative path
 * @returns the normalized relative path and the absolute final path
 * @throws GovernanceError `INVALID_INPUT` for an absolute path, a `..` segment, the staging folder, a
 *   symlink component, a name over `MAX_SEGMENT_BYTES`, a path over `MAX_PATH_BYTES` or an existing file
 */
export async function checkDestination(
  workspaceDir: string,
  destinationPath: string,
): Promise<DownloadDestination> {
  const refuse = (why: string) =>
    new GovernanceError("INVALID_INPUT", `Refused destinationPath '${destinationPath}': ${why}.`, {
      data: { destinationPath },
    });
  if (destinationPath.trim() === "" || destinationPath.includes("\0"))
    throw refuse("it is empty or malformed");
  if (isAbsolute(destinationPath) || /^[A-Za-z]:/.test(destinationPath)) {
    throw refuse("it must be relative to the workspace");
  }
  const segments = destinationSegments(destinationPath);
  if (segments.includes("..")) throw refuse("it must not contain '..'");
  if (segments.length === 0) throw refuse("it names no file");
  if (segments[0] === STAGING_DIR_NAME) throw refuse(`it must not point into ${STAGING_DIR_NAME}`);
  const tooLong = segments.find((segment) => byteLength(segment) > MAX_SEGMENT_BYTES);
  if (tooLong !== undefined) {
    throw refuse(
      `the name '${tooLong.slice(0, 40)}…' is ${byteLength(tooLong)} bytes, over the ${MAX_SEGMENT_BYTES}-byte limit of file names; choose a shorter destinationPath or file name`,
    );
  }
  const root = resolve(workspaceDir);
  const finalPath = join(root, ...segments);
  if (byteLength(finalPath) > MAX_PATH_BYTES) {
    throw refuse(
      `the full path is ${byteLength(finalPath)} bytes, over the ${MAX_PATH_BYTES}-byte limit of paths; choose a shorter destinationPath or file name`,
    );
  }
  // Belt and braces: the segments are clean, so this only fails on a bug.
  if (relative(root, finalPath).startsWith("..") || !finalPath.startsWith(root + sep)) {
    throw refuse("it leaves the workspace");
  }
  let current = root;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    const info = await lstat(current).catch(() => undefined);
    if (info === undefined) break;
    if (info.isSymbolicLink()) throw refuse(`'${segments.slice(0, index + 1).join("/")}' is a symbolic link`);
    if (index === segments.length - 1)
      throw refuse("a file already exists there (downloads never overwrite)");
    if (!info.isDirectory()) throw refuse(`'${segments.slice(0, index + 1).join("/")}' is not a directory`);
  }
  return { relativePath: segments.join("/"), finalPath };
}

/**
 * Creates or checks a folder inside the workspace without following any symbolic link: each component
 * below the workspace root is `lstat`ed, and a missing one is made by a non-recursive `mkdir` (which
 * never follows a link either). The root itself is the operator's and may be reached through links.
 * @param workspaceDir the workspace directory
 * @param segments the folder's path below the workspace, one name per entry (empty for the root)
 * @param mode permissions of folders it creates below the root (a missing root is made 0700) @default 0o700
 * @returns the folder's absolute path under the workspace's real path
 * @throws GovernanceError `INVALID_INPUT` when a component is a symbolic link, not a folder, or not a
 *   plain name (`data.path` is the folder's relative path)
 */
export async function ensureWorkspaceDir(
  workspaceDir: string,
  segments: readonly string[],
  mode = PRIVATE_DIR_MODE,
): Promise<string> {
  const wanted = segments.join("/");
  const refuse = (why: string) =>
    new GovernanceError(
      "INVALID_INPUT",
      `Refused to write into '${wanted}' in the workspace: ${why}; downloads never follow links (make it a real folder, or choose another destinationPath).`,
      { data: { path: wanted } },
    );
  const root = resolve(workspaceDir);
  await makePrivateDir(root);
  let current = await realpath(root);
  for (const [index, segment] of segments.entries()) {
    const shown = segments.slice(0, index + 1).join("/");
    if (segment === "" || segment === "." || segment === ".." || /[\\/\0]/.test(segment)) {
      throw refuse(`'${shown}' is not a plain folder name`);
    }
    current = join(current, segment);
    await mkdir(current, { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    const info = await lstat(current);
    if (info.isSymbolicLink()) throw refuse(`'${shown}' is a symbolic link`);
    if (!info.isDirectory()) throw refuse(`'${shown}' is not a directory`);
  }
  return current;
}
