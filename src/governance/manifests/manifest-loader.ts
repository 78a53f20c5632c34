/**
 * Reading source manifests from JSON files. Every problem of a file is reported at once, each with
 * the JSON path (`tools[2].permission.action`) and the reason, so a manifest author fixes a file in
 * one pass.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { GovernanceError } from "../../core/index.js";
import { type SourceManifest, sourceManifestSchema } from "./manifest-schema.js";

/** One problem of a manifest. */
export interface ManifestIssue {
  /** JSON path of the offending value, e.g. `tools[2].permission.action` (empty for the whole file). */
  path: string;
  /** Why the value is rejected. */
  message: string;
}

/** The outcome of `validateManifest`. */
export type ManifestValidation =
  | { ok: true; manifest: SourceManifest }
  | { ok: false; file?: string; issues: ManifestIssue[] };

/**
 * Validates a parsed manifest against the manifest schema.
 * @param json the parsed JSON value
 * @param file where it came from (echoed in a failed result)
 * @returns the typed manifest, or every issue with its path
 */
export function validateManifest(json: unknown, file?: string): ManifestValidation {
  const parsed = sourceManifestSchema.safeParse(json);
  if (parsed.success) return { ok: true, manifest: parsed.data };
  const issues = parsed.error.issues.flatMap(toManifestIssues);
  return file === undefined ? { ok: false, issues } : { ok: false, file, issues };
}

/**
 * Validates a manifest and throws when it is invalid (the throwing twin of `validateManifest`).
 * @param json the parsed JSON value
 * @param file where it came from, named in the error message
 * @returns the typed manifest
 * @throws GovernanceError `INVALID_MANIFEST` listing every issue with its path
 */
export function parseManifest(json: unknown, file?: string): SourceManifest {
  const result = validateManifest(json, file);
  if (result.ok) return result.manifest;
  const where = file ?? "(inline manifest)";
  const lines = result.issues.map((issue) => `  - ${issue.path || "(root)"}: ${issue.message}`);
  throw new GovernanceError("INVALID_MANIFEST", `Invalid manifest ${where}:\n${lines.join("\n")}`, {
    data: { file: where, issues: result.issues },
  });
}

/**
 * Reads and validates one manifest file.
 * @param path the JSON file
 * @returns the typed manifest
 * @throws GovernanceError `INVALID_MANIFEST` when the file cannot be read, is not JSON, or fails the schema
 */
export async function loadManifestFile(path: string): Promise<SourceManifest> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new GovernanceError("INVALID_MANIFEST", `Cannot read manifest ${path}: ${messageOf(cause)}`, {
      cause,
      data: { file: path },
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new GovernanceError(
      "INVALID_MANIFEST",
      `Invalid manifest ${path}: not valid JSON: ${messageOf(cause)}`,
      {
        cause,
        data: { file: path },
      },
    );
  }
  return parseManifest(json, path);
}

/**
 * The `*.json` files of a manifest folder, sorted by name so that loading order is stable.
 * @param dir the folder
 * @returns absolute file paths
 * @throws GovernanceError `INVALID_CONFIG` when the folder cannot be read
 */
export async function listManifestFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (cause) {
    throw new GovernanceError("INVALID_CONFIG", `Cannot read manifest folder ${dir}: ${messageOf(cause)}`, {
      cause,
      data: { dir },
    });
  }
  return names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => resolve(join(dir, name)));
}

/**
 * Reads every `*.json` manifest of a folder, in file-name order.
 * @param dir the folder
 * @returns the manifests
 * @throws GovernanceError `INVALID_MANIFEST` for the first invalid file; `INVALID_CONFIG` when the folder is unreadable
 */
export async function loadManifestDir(dir: string): Promise<SourceManifest[]> {
  const manifests: SourceManifest[] = [];
  for (const file of await listManifestFiles(dir)) manifests.push(await loadManifestFile(file));
  return manifests;
}

/**
 * The package's built-in `manifests/` folder. This module sits at `src/governance/` in source and
 * `dist/governance/` when built, so the folder is two levels up in both layouts.
 * @returns the absolute folder path
 */
export function builtinManifestDir(): string {
  return fileURLToPath(new URL("../../../manifests/", import.meta.url));
}

/**
 * Formats a zod path as a JSON path: `["tools", 2, "permission"]` becomes `tools[2].permission`.
 * @param path the path segments
 * @returns the dotted path (empty for the root)
 */
export function formatJsonPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function toManifestIssues(issue: z.core.$ZodIssue): ManifestIssue[] {
  // An unknown key is reported per key at its own path, so a typo points straight at itself.
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      path: formatJsonPath([...issue.path, key]),
      message: "unknown field (check the spelling against the manifest reference)",
    }));
  }
  const missing = / received undefined$/.test(issue.message);
  const message = missing
    ? `required field is missing (${issue.message.replace(/^Invalid input: /, "").replace(/, received undefined$/, "")})`
    : issue.message;
  return [{ path: formatJsonPath(issue.path), message }];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
