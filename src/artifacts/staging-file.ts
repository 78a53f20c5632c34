/**
 * The partial file of a download, `<workspace>/.staging/<random>.part`, and its move into place.
 * Every open refuses a symbolic link (`O_NOFOLLOW`), creates only exclusively (`O_EXCL`), and checks
 * the opened handle: a regular file with one link, owned by this process's user, still at its path
 * under the workspace's real path. Permissions change through the handle, and the placed file is
 * checked after the link. Node has no `openat`, so a folder swapped between a check and a call is
 * caught by the check after it, and what was created outside is removed again.
 */
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, link, lstat, open, readlink, realpath, unlink } from "node:fs/promises";
import { join } from "node:path";
import { GovernanceError } from "../core/index.js";
import { ensureWorkspaceDir, STAGING_DIR_NAME } from "./download-path.js";

// O_NOFOLLOW is absent on Windows, where creating a symbolic link needs elevated rights anyway.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const EXISTING = constants.O_RDWR | constants.O_APPEND | NO_FOLLOW;
const CREATE = EXISTING | constants.O_CREAT | constants.O_EXCL;
const STAGING_NAME = /^[0-9a-f]{32}\.part$/;

type Identity = Pick<Stats, "dev" | "ino">;
const sameFile = (a: Identity | undefined, b: Identity) =>
  a !== undefined && a.dev === b.dev && a.ino === b.ino;

/**
 * A fresh staging file name: 128 random bits, so nobody can plant a link at it in advance.
 * @returns `<32 hex digits>.part`
 */
export function newStagingName(): string {
  return `${randomBytes(16).toString("hex")}.part`;
}

/** One download's partial file inside the workspace's staging folder. */
export class StagingFile {
  readonly #workspaceDir: string;
  readonly #dir: string;
  readonly #name: string;
  /** The file this object last opened or created: the only one it will ever remove. */
  #identity: Identity | undefined;

  private constructor(workspaceDir: string, dir: string, name: string) {
    this.#workspaceDir = workspaceDir;
    this.#dir = dir;
    this.#name = name;
  }

  /**
   * Makes sure the staging folder is a real folder inside the workspace (created `0o700` when absent).
   * @param workspaceDir the workspace directory
   * @param name the job's staging name (from {@link newStagingName})
   * @returns the staging file, not yet opened
   * @throws GovernanceError `INVALID_INPUT` when `.staging` is a symbolic link or not a folder, or the
   *   name is not a staging name
   */
  static async prepare(workspaceDir: string, name: string): Promise<StagingFile> {
    if (!STAGING_NAME.test(name)) {
      throw new GovernanceError("INVALID_INPUT", `'${name}' is not a staging file name.`);
    }
    const dir = await ensureWorkspaceDir(workspaceDir, [STAGING_DIR_NAME], 0o700);
    return new StagingFile(workspaceDir, dir, name);
  }

  /** The file's absolute path under the workspace's real path. */
  get path(): string {
    return join(this.#dir, this.#name);
  }

  /**
   * The bytes staged so far (what a resumed transfer starts from).
   * @returns the file's size, 0 when there is no file
   * @throws GovernanceError `INVALID_INPUT` when the file is a link or otherwise not ours
   */
  async size(): Promise<number> {
    const file = await this.open({ create: false }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (file === undefined) return 0;
    try {
      return (await file.stat()).size;
    } finally {
      await file.close();
    }
  }

  /**
   * Opens the file for reading and appending, creating it exclusively when absent.
   * @param options `create: false` opens an existing file only (@default true); `truncateTo` cuts the
   *   file to that many bytes once it passed the checks (the bytes a transfer keeps)
   * @returns a checked handle; the caller closes it
   * @throws GovernanceError `INVALID_INPUT` when the path is a symbolic link, has other hard links,
   *   belongs to another user, is not a regular file, or is no longer inside the staging folder;
   *   the file system's error (`ENOENT`) for a missing file with `create: false`
   */
  async open(options: { create?: boolean; truncateTo?: number } = {}): Promise<FileHandle> {
    let created = false;
    let file: FileHandle;
    try {
      file = await open(this.path, EXISTING).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT" || options.create === false) throw error;
        created = true;
        return open(this.path, CREATE, 0o600);
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ELOOP" || code === "EMLINK") throw this.#refuse("it is a symbolic link", error);
      if (code === "EEXIST") throw this.#refuse("a file appeared at its path while it was created", error);
      throw error;
    }
    const info = await file.stat().catch(closeAndThrow(file));
    const problem = await this.#problem(info);
    if (problem === undefined) {
      this.#identity = info;
      if (options.truncateTo !== undefined)
        await file.truncate(options.truncateTo).catch(closeAndThrow(file));
      return file;
    }
    if (created) await removeStray(file, info);
    await file.close();
    throw this.#refuse(problem);
  }

  /**
   * Makes the staged file read-only and links it at its destination, which must not exist; then
   * checks that it landed inside the workspace and removes the staging name.
   * @param file the handle of this staging file, from `open`
   * @param destinationPath the checked relative destination (`/`-separated)
   * @returns the placed file's absolute path under the workspace's real path
   * @throws GovernanceError `INVALID_INPUT` when a file appeared at the destination meanwhile, or a
   *   folder on the way is (or became) a symbolic link; nothing is left outside the workspace
   */
  async publish(file: FileHandle, destinationPath: string): Promise<string> {
    const info = await file.stat();
    // Through the handle: a path could have been swapped for a link to someone else's file.
    // Read-only, and for this user alone: a downloaded paper is the user's as much as its request is.
    await file.chmod(0o400);
    const segments = destinationPath.split("/");
    const base = segments.pop() as string;
    const dir = await ensureWorkspaceDir(this.#workspaceDir, segments);
    const finalPath = join(dir, base);
    // link() fails with EEXIST instead of replacing, so a file that appeared meanwhile is kept.
    await link(this.path, finalPath).catch((cause: unknown) => {
      const appeared = (cause as NodeJS.ErrnoException).code === "EEXIST";
      throw new GovernanceError(
        "INVALID_INPUT",
        appeared
          ? `A file appeared at '${destinationPath}' meanwhile.`
          : `Could not place '${destinationPath}'.`,
        { cause },
      );
    });
    const landed = await realpath(dir).catch(() => undefined);
    if (landed !== dir || !sameFile(await lstat(finalPath).catch(() => undefined), info)) {
      // The folder moved between the check and the link: take back the name we created, wherever it is.
      if (landed !== undefined) await unlinkIfSame(join(landed, base), info);
      await unlinkIfSame(finalPath, info);
      throw new GovernanceError(
        "INVALID_INPUT",
        `Refused to place '${destinationPath}': a folder on the way changed while the file was placed (a symbolic link?).`,
        { data: { path: destinationPath } },
      );
    }
    await this.remove();
    return finalPath;
  }

  /**
   * Takes back a file `publish` placed, when its path still names that file (a job cancelled while
   * its file was being placed ends with no file).
   * @param file the handle `publish` was given
   * @param finalPath what `publish` returned
   */
  async unpublish(file: FileHandle, finalPath: string): Promise<void> {
    await unlinkIfSame(finalPath, await file.stat());
  }

  /** Removes the staging file, when the path still names the file this object opened. */
  async remove(): Promise<void> {
    const identity = this.#identity;
    if (identity === undefined || (await realpath(this.#dir).catch(() => undefined)) !== this.#dir) return;
    await unlinkIfSame(this.path, identity);
  }

  async #problem(info: Stats): Promise<string | undefined> {
    if (!info.isFile()) return "it is not a regular file";
    if (info.nlink !== 1) return `it has ${info.nlink} hard links`;
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) return `it belongs to user ${info.uid}, not ${uid}`;
    // The folder may have been swapped between its check and the open.
    if ((await realpath(this.#dir).catch(() => undefined)) !== this.#dir) return "its folder moved";
    if (!sameFile(await lstat(this.path).catch(() => undefined), info)) return "its folder moved";
    return undefined;
  }

  #refuse(why: string, cause?: unknown): GovernanceError {
    return new GovernanceError(
      "INVALID_INPUT",
      `Refused the staging file '${STAGING_DIR_NAME}/${this.#name}': ${why}; downloads never follow links.`,
      { cause, data: { path: `${STAGING_DIR_NAME}/${this.#name}` } },
    );
  }
}

function closeAndThrow(file: FileHandle) {
  return async (error: unknown): Promise<never> => {
    await file.close();
    throw error;
  };
}

async function unlinkIfSame(path: string, identity: Identity): Promise<void> {
  if (sameFile(await lstat(path).catch(() => undefined), identity)) await unlink(path).catch(() => undefined);
}

/** Removes a file this process just created in the wrong place, found through `/proc` where it exists. */
async function removeStray(file: FileHandle, info: Stats): Promise<void> {
  const where = await readlink(`/proc/self/fd/${file.fd}`).catch(() => undefined);
  if (where !== undefined && info.size === 0) await unlinkIfSame(where, info);
}
