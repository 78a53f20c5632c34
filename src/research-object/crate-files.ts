/**
 * A research object on disk: written as a folder or as one `.zip`, and opened again from either. A crate
 * handed over by someone else is third-party input, so opening one is bounded (sizes, entry count,
 * metadata size), refuses paths that leave the crate, and never follows a symbolic link.
 */
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { unzipSync, zipSync } from "fflate";
import { GovernanceError } from "../core/index.js";
import type { CrateMetadata } from "./crate-graph.js";
import { METADATA_FILE, PREVIEW_FILE } from "./crate-vocabulary.js";

/** One payload file of a crate, held in memory. */
export interface CrateFile {
  /** Its path inside the crate (also its `@id`): letters, digits, `.`, `_`, `-` and `/` only. */
  path: string;
  bytes: Uint8Array;
}

/** A crate ready to be written: the metadata, the payload files and the HTML preview. */
export interface ResearchObjectFiles {
  metadata: CrateMetadata;
  files: readonly CrateFile[];
  /** The `ro-crate-preview.html` text. */
  preview: string;
}

/** A crate opened for reading. */
export interface OpenedResearchObject {
  /** The folder or zip it was read from. */
  readonly location: string;
  readonly metadata: CrateMetadata;
  /** The metadata file's own bytes, as stored. */
  readonly metadataBytes: Uint8Array;
  /** Every regular file of the crate (metadata and preview included), sorted. */
  readonly paths: readonly string[];
  /** Entries that were not read, each with why (a link, a path leaving the crate, past a bound). */
  readonly refused: readonly { path: string; reason: string }[];
  /**
   * A file's bytes.
   * @param path a path inside the crate
   * @returns the bytes, or `undefined` when the crate has no such regular file
   */
  read(path: string): Promise<Uint8Array | undefined>;
}

/** Bounds of opening a crate. */
export interface OpenResearchObjectLimits {
  /** @default 64 MiB */
  maxMetadataBytes?: number;
  /** Largest file read. @default 512 MiB */
  maxFileBytes?: number;
  /** Largest total of a zip's uncompressed entries. @default 2 GiB */
  maxTotalBytes?: number;
  /** Most entries of a zip or files of a folder. @default 200,000 */
  maxEntries?: number;
}

const SAFE_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Whether a crate path is a plain relative path that stays inside the crate.
 * @param path a path (an `@id` of a data entity)
 */
export function isSafeCratePath(path: string): boolean {
  return SAFE_PATH.test(path) && !path.split("/").some((segment) => segment === "." || segment === "..");
}

/**
 * The files of a crate as written: metadata (pretty JSON), preview, then the payload.
 * @param crate the crate
 * @returns path and bytes of every file
 */
export function crateEntries(crate: ResearchObjectFiles): CrateFile[] {
  const encoder = new TextEncoder();
  return [
    { path: METADATA_FILE, bytes: encoder.encode(`${JSON.stringify(crate.metadata, null, 2)}\n`) },
    { path: PREVIEW_FILE, bytes: encoder.encode(crate.preview) },
    ...crate.files,
  ];
}

/**
 * The crate as one zip archive (deflated, entries in a fixed order with a fixed time, so the same crate
 * gives the same bytes).
 * @param crate the crate
 * @returns the zip's bytes
 */
export function researchObjectZip(crate: ResearchObjectFiles): Uint8Array {
  const entries: Record<string, [Uint8Array, { mtime: Date }]> = {};
  const mtime = new Date("1980-01-01T00:00:00Z");
  for (const { path, bytes } of crateEntries(crate)) entries[path] = [bytes, { mtime }];
  return zipSync(entries, { level: 6 });
}

/**
 * Writes a crate to a folder, or to one zip file when `out` ends in `.zip`. A folder must be new or
 * empty; a zip is written to a temporary name first and renamed into place.
 * @param crate the crate
 * @param out the folder or the `.zip` path
 * @returns where it went, its size in bytes and how many files it holds
 * @throws GovernanceError `INVALID_INPUT` when the folder exists and is not empty
 */
export async function writeResearchObject(
  crate: ResearchObjectFiles,
  out: string,
): Promise<{ path: string; bytes: number; files: number }> {
  const target = resolve(out);
  const entries = crateEntries(crate);
  if (target.toLowerCase().endsWith(".zip")) {
    const zip = researchObjectZip(crate);
    await mkdir(dirname(target), { recursive: true });
    const temp = `${target}.${process.pid}.partial`;
    await writeFile(temp, zip);
    await rename(temp, target);
    return { path: target, bytes: zip.byteLength, files: entries.length };
  }
  const existing = await readdir(target).catch(() => undefined);
  if (existing !== undefined && existing.length > 0) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `${target} exists and is not empty; give a new folder (or a path ending in .zip) for the research object.`,
    );
  }
  let bytes = 0;
  for (const { path, bytes: content } of entries) {
    const file = join(target, ...path.split("/"));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
    bytes += content.byteLength;
  }
  return { path: target, bytes, files: entries.length };
}

/**
 * Opens a crate from a folder or a zip file, and parses its metadata.
 * @param location the folder or the `.zip`
 * @param limits the bounds (third-party input)
 * @returns the crate
 * @throws GovernanceError `NOT_FOUND` when there is nothing at `location`; `INVALID_INPUT` when it is not
 *   a readable crate (a broken zip, no `ro-crate-metadata.json`, metadata that is not JSON-LD with a
 *   `@graph` of entities with an `@id` each) or crosses a bound
 */
export async function openResearchObject(
  location: string,
  limits: OpenResearchObjectLimits = {},
): Promise<OpenedResearchObject> {
  const bounds = {
    maxMetadataBytes: limits.maxMetadataBytes ?? 64 * 1024 * 1024,
    maxFileBytes: limits.maxFileBytes ?? 512 * 1024 * 1024,
    maxTotalBytes: limits.maxTotalBytes ?? 2 * 1024 * 1024 * 1024,
    maxEntries: limits.maxEntries ?? 200_000,
  };
  const path = resolve(location);
  const stat = await lstat(path).catch(() => undefined);
  if (stat === undefined) throw new GovernanceError("NOT_FOUND", `No research object at ${path}.`);
  const opened = stat.isDirectory() ? await openFolder(path, bounds) : await openZip(path, bounds);
  const metadataBytes = await opened.read(METADATA_FILE);
  if (metadataBytes === undefined) {
    throw new GovernanceError("INVALID_INPUT", `${path} is not an RO-Crate: it has no ${METADATA_FILE}.`);
  }
  if (metadataBytes.byteLength > bounds.maxMetadataBytes) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `${METADATA_FILE} of ${path} has ${metadataBytes.byteLength} bytes, more than ${bounds.maxMetadataBytes}.`,
    );
  }
  return { ...opened, location: path, metadata: parseMetadata(metadataBytes, path), metadataBytes };
}

type Bounds = Required<OpenResearchObjectLimits>;
type Opened = Pick<OpenedResearchObject, "paths" | "refused" | "read">;

async function openFolder(root: string, bounds: Bounds): Promise<Opened> {
  const paths: string[] = [];
  const refused: { path: string; reason: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const path = relative(root, full).split(sep).join("/");
      if (entry.isDirectory()) await walk(full);
      else if (!entry.isFile()) refused.push({ path, reason: "not a regular file (a link or a device)" });
      else if (!isSafeCratePath(path))
        refused.push({ path, reason: "a name outside the crate's safe characters" });
      else if (paths.length >= bounds.maxEntries)
        refused.push({ path, reason: "past the crate's file count bound" });
      else paths.push(path);
    }
  };
  await walk(root);
  paths.sort();
  const present = new Set(paths);
  return {
    paths,
    refused,
    async read(path) {
      if (!present.has(path)) return undefined;
      const handle = await open(join(root, ...path.split("/")), constants.O_RDONLY | NO_FOLLOW).catch(
        () => undefined,
      );
      if (handle === undefined) return undefined;
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) return undefined;
        if (stat.size > bounds.maxFileBytes) {
          throw new GovernanceError(
            "INVALID_INPUT",
            `${path} has ${stat.size} bytes, more than the ${bounds.maxFileBytes} a crate file may have.`,
          );
        }
        return new Uint8Array(await handle.readFile());
      } finally {
        await handle.close();
      }
    },
  };
}

async function openZip(path: string, bounds: Bounds): Promise<Opened> {
  const data = new Uint8Array(await readFile(path));
  const refused: { path: string; reason: string }[] = [];
  let entries = 0;
  let total = 0;
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(data, {
      // The declared sizes are checked before anything is inflated (a zip bomb stops here); the
      // inflated length is compared with them afterwards.
      filter: (file) => {
        if (file.name.endsWith("/")) return false;
        if (!isSafeCratePath(file.name)) {
          refused.push({ path: file.name, reason: "a path that leaves the crate or uses unsafe characters" });
          return false;
        }
        entries++;
        total += file.originalSize;
        if (
          entries > bounds.maxEntries ||
          file.originalSize > bounds.maxFileBytes ||
          total > bounds.maxTotalBytes
        ) {
          throw new GovernanceError(
            "INVALID_INPUT",
            `${path} is larger than a crate may be (at most ${bounds.maxEntries} entries, ${bounds.maxFileBytes} bytes a file, ${bounds.maxTotalBytes} in all).`,
          );
        }
        return true;
      },
    });
  } catch (cause) {
    if (cause instanceof GovernanceError) throw cause;
    throw new GovernanceError("INVALID_INPUT", `${path} is not a readable zip archive.`, { cause });
  }
  const paths = Object.keys(files).sort();
  return {
    paths,
    refused,
    async read(name) {
      return Object.hasOwn(files, name) ? files[name] : undefined;
    },
  };
}

function parseMetadata(bytes: Uint8Array, location: string): CrateMetadata {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (cause) {
    throw new GovernanceError("INVALID_INPUT", `${METADATA_FILE} of ${location} is not UTF-8 JSON.`, {
      cause,
    });
  }
  const graph = (parsed as { "@graph"?: unknown } | null)?.["@graph"];
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(graph)) {
    throw new GovernanceError("INVALID_INPUT", `${METADATA_FILE} of ${location} has no @graph array.`);
  }
  const bad = graph.findIndex(
    (entity) =>
      typeof entity !== "object" ||
      entity === null ||
      typeof (entity as { "@id"?: unknown })["@id"] !== "string",
  );
  if (bad >= 0) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `${METADATA_FILE} of ${location}: @graph[${bad}] is not an entity with an @id.`,
    );
  }
  return parsed as CrateMetadata;
}
