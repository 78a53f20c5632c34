#!/usr/bin/env node
// The published package.json carries no development-only fields. npm packs the package.json it finds on
// disk, and has no option to leave fields out, so `prepack` swaps in a cleaned copy (keeping the original
// byte for byte in a backup) and `postpack` puts the original back.
//   node scripts/pack-manifest.mjs clean     write the cleaned package.json (prepack)
//   node scripts/pack-manifest.mjs restore   put the original back (postpack; also after a failed pack)
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = join(root, "package.json");
const backup = join(root, ".package.json.prepack");

/** Fields that only matter inside this repository: lifecycle and dev scripts, dev tooling, install policy. */
const DEVELOPMENT_FIELDS = ["scripts", "devDependencies", "allowScripts", "overrides"];

function restore() {
  if (!existsSync(backup)) return false;
  renameSync(backup, manifest);
  return true;
}

function clean() {
  // A backup left by a pack that died before postpack is the original: never overwrite it with a cleaned copy.
  restore();
  const original = readFileSync(manifest);
  const pkg = JSON.parse(original.toString("utf8"));
  for (const field of DEVELOPMENT_FIELDS) delete pkg[field];
  writeFileSync(backup, original);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
  process.stdout.write(
    `pack-manifest: package.json without ${DEVELOPMENT_FIELDS.join(", ")} until postpack ` +
      "(if the pack is interrupted, run `node scripts/pack-manifest.mjs restore`)\n",
  );
}

const command = process.argv[2];
if (command === "clean") clean();
else if (command === "restore") {
  if (restore()) process.stdout.write("pack-manifest: original package.json restored\n");
} else {
  process.stderr.write("usage: node scripts/pack-manifest.mjs clean|restore\n");
  process.exit(2);
}
