/**
 * Stores private to the user that runs Sciencegate: every request, result, grant and downloaded paper
 * is readable by no other local user. New folders are made 0700 and new files 0600; a store made
 * before (by an earlier version, or under a loose umask) is tightened when it is opened.
 */
import { constants } from "node:fs";
import { type FileHandle, mkdir, open, readdir } from "node:fs/promises";
import { join } from "node:path";

/** The mode of a folder of a store: only its owner reads, writes and enters it. */
export const PRIVATE_DIR_MODE = 0o700;

/** The mode of a file of a store: only its owner reads and writes it. */
export const PRIVATE_FILE_MODE = 0o600;

/** Group and other permission bits: what tightening takes away. */
const GROUP_AND_OTHER = 0o077;
// Modes mean little on Windows (chmod only toggles read-only there), and there is no O_NOFOLLOW.
const TIGHTENS = process.platform !== "win32";
// A link is never followed, and a FIFO planted in a store never blocks the open.
const OPEN_OWN = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Creates a folder and its missing parents with mode 0700; a folder that exists is left as it is.
 * @param path the folder
 * @returns when it exists
 * @throws the file system's error (e.g. `EACCES`, `ENOTDIR`)
 */
export async function makePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Takes the group and other permissions off a file or folder of a store (absent is fine, a symbolic
 * link is left alone, and so is a path another user owns, which only its owner can change).
 * @param path the file or folder
 * @returns whether it is a folder that had group or other permissions (its content may have them too)
 * @throws the file system's error other than a missing path or a link
 */
export async function tightenPrivatePath(path: string): Promise<boolean> {
  if (!TIGHTENS) return false;
  let handle: FileHandle;
  try {
    // Through a handle, so that a path swapped for a link between a check and the chmod changes nothing.
    handle = await open(path, OPEN_OWN);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Missing, a link, a socket, or a file its owner made unreadable: nothing to tighten through it.
    if (["ENOENT", "ELOOP", "EMLINK", "ENXIO", "EACCES"].includes(code ?? "")) return false;
    throw error;
  }
  try {
    const info = await handle.stat();
    const loose = (info.mode & GROUP_AND_OTHER) !== 0;
    if (!loose || info.uid !== process.getuid?.()) return false;
    await handle.chmod(info.mode & 0o700);
    return info.isDirectory();
  } finally {
    await handle.close();
  }
}

/**
 * Tightens a store's folder (see {@link tightenPrivatePath}); when it had group or other permissions
 * (a store of an earlier version), everything below it is tightened too, once: the next open finds
 * the folder private and reads nothing below it. Links are never followed.
 * @param root the store's folder (absent is fine)
 * @returns when done
 * @throws the file system's error
 */
export async function tightenPrivateTree(root: string): Promise<void> {
  if (await tightenPrivatePath(root)) await tightenBelow(root);
}

async function tightenBelow(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory() && !entry.isFile()) continue;
    const path = join(dir, entry.name);
    await tightenPrivatePath(path);
    if (entry.isDirectory()) await tightenBelow(path);
  }
}

/**
 * Tightens an SQLite database and the files SQLite keeps beside it (`-wal`, `-shm`, `-journal`).
 * SQLite gives a new `-wal` or `-shm` the database file's own mode, so these stay private after.
 * @param path the database file
 * @returns when done
 * @throws the file system's error
 */
export async function tightenSqliteFiles(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) await tightenPrivatePath(`${path}${suffix}`);
}
