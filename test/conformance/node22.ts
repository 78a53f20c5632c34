/**
 * A Node.js 22 or later for the conformance suite's CLI, which does not load on Node 20: this Node when
 * it is recent enough, else `SCIENCEGATE_NODE22`, else the npm package `node@22` installed once into
 * `node_modules/.cache` (from the npm registry, like every other dependency).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The path of a Node.js ≥ 22 binary, installing `node@22` into the cache when there is none.
 * @returns an executable path
 */
export function node22(): string {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const given = process.env.SCIENCEGATE_NODE22;
  if (given !== undefined && given !== "") return given;
  const prefix = join(REPO_ROOT, "node_modules", ".cache", "sciencegate-node22");
  const binary = join(prefix, "node_modules", ".bin", "node");
  if (!existsSync(binary)) {
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", prefix, "node@22"],
      { stdio: "inherit" },
    );
  }
  const version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  if (Number(version.replace(/^v/, "").split(".")[0]) < 22) {
    throw new Error(`${binary} is ${version}, not Node.js 22 or later`);
  }
  return binary;
}
