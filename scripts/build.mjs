#!/usr/bin/env node
// `npm run build`: a clean `dist/` from `tsc -p tsconfig.build.json`, plus every runtime asset tsc does not
// emit (any file under the source root that is not TypeScript and not documentation, e.g. the bundled
// Python introspection script), copied to the same relative path. Folders come from tsconfig.build.json, so
// moving modules around inside `src/` needs no change here.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const project = join(root, "tsconfig.build.json");
const { compilerOptions } = JSON.parse(readFileSync(project, "utf8"));
const srcDir = resolve(root, compilerOptions.rootDir);
const outDir = resolve(root, compilerOptions.outDir);

/** Files tsc compiles or that only document the sources; everything else under `src/` ships as is. */
const isSourceOrDoc = (name) => /\.(?:[cm]?ts|tsx|md)$/i.test(name);
/** Interpreter caches and editor or OS droppings that must never ship. */
const isJunk = (name) => name === "__pycache__" || name.startsWith(".") || /\.py[co]$/i.test(name);

/**
 * The runtime assets under `dir`, as paths relative to it.
 * @param {string} dir
 * @returns {string[]}
 */
function findAssets(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !isSourceOrDoc(entry.name))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((path) => !path.split(/[\\/]/).some(isJunk))
    .sort();
}

rmSync(outDir, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const compiled = spawnSync(process.execPath, [tsc, "-p", project], { cwd: root, stdio: "inherit" });
if (compiled.status !== 0) {
  process.stderr.write(
    `build: tsc -p tsconfig.build.json failed (exit ${compiled.status ?? compiled.signal})\n`,
  );
  process.exit(compiled.status || 1);
}

const assets = findAssets(srcDir);
for (const asset of assets) {
  const target = join(outDir, asset);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(srcDir, asset), target);
}
process.stdout.write(
  `build: ${relative(root, outDir)}/ compiled; ${assets.length} asset(s) copied${assets.length ? `: ${assets.join(", ")}` : ""}\n`,
);
