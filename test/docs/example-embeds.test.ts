/**
 * The docs site's guides show the example files the examples project runs, by embedding them
 * (VitePress `<<< @/../examples/<file>`), so a page and its tested code cannot drift. VitePress renders a
 * missing snippet as an error message without failing the build: this check fails instead.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const EMBED = /^<<< @\/\.\.\/examples\/(\S+?)(?:\{[^}]*\})?\s*$/gm;

function pages(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith(".") || entry.name === "public") return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pages(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** Page (relative to docs/) → the examples/ files it embeds. */
const embeds = new Map(
  pages(join(repo, "docs")).map((page) => [
    relative(join(repo, "docs"), page),
    [...readFileSync(page, "utf8").matchAll(EMBED)].map((m) => m[1] as string),
  ]),
);
const embedded = new Set([...embeds.values()].flat());
/** The files the examples project runs from the packed tarball (its ENTRY_POINTS list). */
const runSource = readFileSync(join(repo, "test/examples/approval-examples.examples.test.ts"), "utf8");
const entryPoints = [
  ...(/const ENTRY_POINTS = \[([\s\S]*?)\];/.exec(runSource)?.[1] ?? "").matchAll(/^\s*"([^"]+)",/gm),
].map((m) => m[1] as string);

describe("the guides embed the examples the examples project runs", () => {
  test("the pages embed files, and the examples project lists its entry points", () => {
    expect(embedded.size).toBeGreaterThan(10);
    expect(entryPoints.length).toBeGreaterThan(10);
  });

  test.each([...embedded].sort())("examples/%s exists and is run from the packed tarball", (file) => {
    expect(existsSync(join(repo, "examples", file))).toBe(true);
    expect(entryPoints).toContain(file);
  });

  test("every entry point that is a guide's file is embedded by a page", () => {
    // Helpers other examples start or import, not guides of their own.
    const helpers = new Set(["offline/run.ts", "multi-server-client/lab-server.ts"]);
    expect(entryPoints.filter((file) => !helpers.has(file) && !embedded.has(file))).toEqual([]);
  });
});
