/**
 * Content-addressed storage (CAS) for requests, raw responses and normalized results. An object's
 * address is the SHA-256 of its bytes, so a ledger row's reference proves what was seen.
 */
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, sha256Hex } from "../../core/index.js";
import {
  type ContentObject,
  type ContentRef,
  contentNotFound,
  contentObject,
  decodeJson,
  jsonObject,
  parseContentRef,
} from "./content-object.js";

export { type ContentRef, parseContentRef };

/** A content-addressed store. Implementations must pass `describeContentStoreConformance`. */
export interface ContentStore {
  /**
   * Stores bytes (strings as UTF-8); storing equal content twice keeps one object. Do not modify a
   * passed buffer before the promise settles.
   * @throws GovernanceError `INVALID_INPUT` when `data` is neither a string nor bytes
   */
  put(data: string | Uint8Array): Promise<ContentRef>;
  /**
   * Stores the canonical JSON of `value` (sorted keys), so equal values share one object.
   * @throws GovernanceError `INVALID_INPUT` when `value` cannot be serialized as JSON
   */
  putJson(value: unknown): Promise<ContentRef>;
  /**
   * The stored bytes (a fresh copy the caller may modify).
   * @throws GovernanceError `NOT_FOUND` for an unknown ref, `INVALID_INPUT` for a malformed one
   */
  get(ref: string): Promise<Uint8Array>;
  /**
   * The stored object parsed as UTF-8 JSON.
   * @throws GovernanceError `NOT_FOUND`, or `INVALID_INPUT` for a malformed ref or non-JSON content
   */
  getJson<T = unknown>(ref: string): Promise<T>;
  /**
   * Whether an object is stored under `ref`.
   * @throws GovernanceError `INVALID_INPUT` for a malformed ref
   */
  has(ref: string): Promise<boolean>;
  /**
   * Re-hashes the stored object; false means it was altered after it was written.
   * @throws GovernanceError `NOT_FOUND` for an unknown ref, `INVALID_INPUT` for a malformed one
   */
  verify(ref: string): Promise<boolean>;
  /**
   * Optional: stores an object whose bytes and address are already known (as `jsonObject` makes
   * them), so the caller's hash is not computed again. Without it, `put(object.bytes)` is used.
   */
  putObject?(object: ContentObject): Promise<ContentRef>;
}

/** Objects up to this size are written with synchronous fs calls. */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

const HEX_NAME = /^[0-9a-f]{64}$/;

function refOf({ ref, sha256, size }: ContentRef): ContentRef {
  return { ref, sha256, size };
}

function isErrno(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

/**
 * A file CAS: `<root>/sha256/<first 2 hex>/<64 hex>`, written to a temp file in the same directory and
 * renamed into place, so readers never see a partial object. Folders are made 0700 and objects 0600:
 * they hold every request and result. Objects are not fsynced; a crash can at
 * worst leave a truncated object, which `put` of the same content repairs and `verify` detects.
 * @example
 * const cas = new FileContentStore(join(resolveDataDir(), "cas"));
 * const { ref } = await cas.putJson({ query: "crispr" });
 */
export class FileContentStore implements ContentStore {
  /** Absolute root directory. */
  readonly root: string;
  readonly #dirs = new Set<string>();

  /** @param root the store's directory (created on first write); relative paths resolve against the cwd */
  constructor(root: string) {
    this.root = resolve(root);
  }

  async put(data: string | Uint8Array): Promise<ContentRef> {
    return this.putObject(contentObject(data));
  }

  async putJson(value: unknown): Promise<ContentRef> {
    return this.putObject(jsonObject(value));
  }

  /**
   * Stores an object whose bytes and address are already known (the broker serializes and hashes a
   * call's objects once).
   * @param object bytes and address, as `contentObject` or `jsonObject` made them
   * @returns its address
   */
  async putObject(object: ContentObject): Promise<ContentRef> {
    const { bytes } = object;
    const ref = refOf(object);
    const path = this.#pathOf(ref.sha256);
    // Small objects (requests, results) are written synchronously: measured on this path, five async
    // fs round trips through libuv's 4-thread pool cost ~1 ms per object, the sync calls ~0.05 ms.
    if (bytes.byteLength <= SYNC_WRITE_MAX_BYTES) this.#putSync(path, ref, bytes);
    else await this.#putAsync(path, ref, bytes);
    return ref;
  }

  #putSync(path: string, ref: ContentRef, bytes: Uint8Array): void {
    // Dedup: an object of the right size is the same content. A wrong size (a torn write) is rewritten.
    const existing = statSync(path, { throwIfNoEntry: false });
    if (existing?.isFile() && existing.size === ref.size) return;
    const dir = dirname(path);
    if (!this.#dirs.has(dir)) {
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      this.#dirs.add(dir);
    }
    const temp = join(dir, `.${ref.sha256}.${process.pid}.${randomUUID()}.tmp`);
    try {
      writeFileSync(temp, bytes, { flag: "wx", mode: PRIVATE_FILE_MODE });
      renameSync(temp, path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
  }

  async #putAsync(path: string, ref: ContentRef, bytes: Uint8Array): Promise<void> {
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isFile() && existing.size === ref.size) return;
    const dir = dirname(path);
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const temp = join(dir, `.${ref.sha256}.${process.pid}.${randomUUID()}.tmp`);
    try {
      await writeFile(temp, bytes, { flag: "wx", mode: PRIVATE_FILE_MODE });
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async get(ref: string): Promise<Uint8Array> {
    const path = this.#pathOf(parseContentRef(ref));
    try {
      const buffer = await readFile(path);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      if (isErrno(error, "ENOENT", "EISDIR")) throw contentNotFound(ref);
      throw error;
    }
  }

  async getJson<T = unknown>(ref: string): Promise<T> {
    return decodeJson<T>(await this.get(ref), ref);
  }

  async has(ref: string): Promise<boolean> {
    const info = await stat(this.#pathOf(parseContentRef(ref))).catch(() => undefined);
    return info?.isFile() ?? false;
  }

  async verify(ref: string): Promise<boolean> {
    const sha256 = parseContentRef(ref);
    try {
      return (await hashFile(this.#pathOf(sha256))) === sha256;
    } catch (error) {
      if (isErrno(error, "ENOENT", "EISDIR")) throw contentNotFound(ref);
      throw error;
    }
  }

  /**
   * Re-hashes every stored object. Temp files of writes in progress are skipped.
   * @returns the refs of objects whose bytes no longer match their address, sorted
   */
  async verifyAll(): Promise<string[]> {
    const bad: string[] = [];
    const base = join(this.root, "sha256");
    for (const shard of (await listDir(base)).sort()) {
      for (const name of (await listDir(join(base, shard))).sort()) {
        if (!HEX_NAME.test(name)) continue;
        // An object in the wrong shard can never be read back, so it counts as bad too.
        const ok = name.startsWith(shard) && (await hashFile(join(base, shard, name))) === name;
        if (!ok) bad.push(`sha256:${name}`);
      }
    }
    return bad;
  }

  #pathOf(sha256: string): string {
    return join(this.root, "sha256", sha256.slice(0, 2), sha256);
  }
}

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (error) {
    if (isErrno(error, "ENOENT", "ENOTDIR")) return [];
    throw error;
  }
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  // Streamed so that verifying a large object does not load it whole.
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** An in-process CAS for tests and ephemeral sessions; contents vanish with the process. */
export class MemoryContentStore implements ContentStore {
  readonly #objects = new Map<string, Uint8Array>();

  async put(data: string | Uint8Array): Promise<ContentRef> {
    return this.putObject(contentObject(data));
  }

  async putJson(value: unknown): Promise<ContentRef> {
    return this.putObject(jsonObject(value));
  }

  /**
   * Stores an object whose bytes and address are already known.
   * @param object bytes and address, as `contentObject` or `jsonObject` made them
   * @returns its address
   */
  async putObject(object: ContentObject): Promise<ContentRef> {
    const { bytes } = object;
    const ref = refOf(object);
    // Copy so a caller that reuses its buffer cannot change what was stored.
    if (!this.#objects.has(ref.sha256)) this.#objects.set(ref.sha256, new Uint8Array(bytes));
    return ref;
  }

  async get(ref: string): Promise<Uint8Array> {
    const bytes = this.#objects.get(parseContentRef(ref));
    if (bytes === undefined) throw contentNotFound(ref);
    return new Uint8Array(bytes);
  }

  async getJson<T = unknown>(ref: string): Promise<T> {
    return decodeJson<T>(await this.get(ref), ref);
  }

  async has(ref: string): Promise<boolean> {
    return this.#objects.has(parseContentRef(ref));
  }

  async verify(ref: string): Promise<boolean> {
    const sha256 = parseContentRef(ref);
    const bytes = this.#objects.get(sha256);
    if (bytes === undefined) throw contentNotFound(ref);
    return sha256Hex(bytes) === sha256;
  }
}
