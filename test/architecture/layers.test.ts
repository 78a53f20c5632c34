/**
 * The layering of ARCHITECTURE.md holds: Biome's import rules refuse an upward import and an import
 * past a folder's index.ts, and the folders of src/ import each other without a cycle.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const src = join(root, "src");
const biome = join(root, "node_modules/.bin/biome");

/** The folder of src/ a file belongs to: the deepest one with an index.ts (or its top folder). */
function folderOf(file: string): string {
  const parts = relative(src, file).split("/");
  if (parts.length === 1) return "(root)";
  if (parts[0] === "governance" && parts.length > 2) return `governance/${parts[1]}`;
  return parts[0] ?? "(root)";
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

describe("Biome's import rules", () => {
  const sandbox = mkdtempSync(join(tmpdir(), "sciencegate-layers-"));
  const config = JSON.parse(readFileSync(join(root, "biome.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(sandbox, "biome.json"), JSON.stringify({ ...config, vcs: { enabled: false } }));
  afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

  function lint(path: string, specifier: string): string {
    const file = join(sandbox, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `import { x } from "${specifier}";\nexport { x };\n`);
    try {
      execFileSync(biome, ["lint", "--max-diagnostics=5", file], {
        cwd: sandbox,
        encoding: "utf8",
        stdio: "pipe",
      });
      return "ok";
    } catch (error) {
      const { stdout, stderr } = error as { stdout: string; stderr: string };
      return `${stdout}${stderr}`;
    } finally {
      rmSync(file);
    }
  }

  test.each([
    ["src/core/probe.ts", "../runtime/index.js", "lower layer"],
    ["src/governance/permissions/probe.ts", "../broker/index.js", "lower layer"],
    ["src/governance/audit/probe.ts", "../../visibility/index.js", "lower layer"],
    ["src/servers/sources/probe.ts", "../../governance/audit/index.js", "lower layer"],
    ["src/runtime/probe.ts", "../governance/audit/ledger.js", "only door"],
    ["src/adk/local-tools/probe.ts", "../../governance/catalog/source-catalog.js", "only door"],
    ["src/nodes/probe.ts", "../adapters/index.js", "lower layer"],
    ["src/adk/probe.ts", "../gateway/index.js", "lower layer"],
    ["src/gateway/probe.ts", "../cli/runtime.js", "lower layer"],
    ["src/gateway/probe.ts", "../console/index.js", "lower layer"],
    ["src/console/probe.ts", "../cli/runtime.js", "lower layer"],
    ["src/console/probe.ts", "../gateway/gateway-http-guard.js", "only door"],
    ["src/cli/commands/probe.ts", "../../gateway/gateway-session.js", "only door"],
    ["src/runtime/probe.ts", "../research-object/index.js", "lower layer"],
    ["src/nodes/probe.ts", "../research-object/index.js", "lower layer"],
    ["src/research-object/probe.ts", "../nodes/index.js", "lower layer"],
    ["src/research-object/probe.ts", "../console/index.js", "lower layer"],
    ["src/console/probe.ts", "../research-object/verify-research-object.js", "only door"],
  ])("%s importing %s is refused (%s)", (path, specifier, reason) => {
    expect(lint(path, specifier)).toContain(reason);
  });

  test.each([
    ["src/runtime/probe.ts", "../governance/audit/index.js"],
    ["src/governance/broker/probe.ts", "../permissions/index.js"],
    ["src/adk/local-tools/probe.ts", "../science-toml.js"],
    ["src/cli/commands/probe.ts", "../io.js"],
    ["src/gateway/probe.ts", "../adapters/index.js"],
    ["src/cli/commands/probe.ts", "../../gateway/index.js"],
    ["src/console/probe.ts", "../gateway/index.js"],
    ["src/cli/commands/probe.ts", "../../console/index.js"],
    ["src/research-object/probe.ts", "../runtime/index.js"],
    ["src/research-object/probe.ts", "../artifacts/index.js"],
    ["src/gateway/probe.ts", "../research-object/index.js"],
    ["src/console/probe.ts", "../research-object/index.js"],
    ["src/cli/commands/probe.ts", "../../research-object/index.js"],
  ])("%s importing %s is allowed", (path, specifier) => {
    expect(lint(path, specifier)).toBe("ok");
  });
});

test("the folders of src/ import each other without a cycle", () => {
  const edges = new Map<string, Set<string>>();
  for (const file of sourceFiles(src)) {
    const from = folderOf(file);
    for (const match of readFileSync(file, "utf8").matchAll(/(?:from\s+|import\()"(\.[^"]+)"/g)) {
      const to = folderOf(resolve(dirname(file), match[1] ?? ""));
      if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  const cycles: string[] = [];
  const visit = (node: string, path: string[]): void => {
    if (path.includes(node)) {
      cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
  };
  for (const node of edges.keys()) visit(node, []);
  expect(edges.size).toBeGreaterThan(10);
  expect(cycles).toEqual([]);
});

test("no file of src/ imports itself through a chain of imports (type imports included)", () => {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(src)) {
    const targets = [...readFileSync(file, "utf8").matchAll(/(?:from\s+|import\()"(\.[^"]+)"/g)].map((m) =>
      resolve(dirname(file), m[1] ?? "").replace(/\.js$/, ".ts"),
    );
    graph.set(file, targets);
  }
  // Depth-first search with colours: a grey node reached again closes a cycle.
  const colour = new Map<string, "grey" | "black">();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]): void => {
    colour.set(file, "grey");
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (colour.get(next) === "grey") {
        cycles.push(
          [...path.slice(path.indexOf(next)), file, next].map((f) => relative(src, f)).join(" -> "),
        );
      } else if (!colour.has(next)) visit(next, [...path, file]);
    }
    colour.set(file, "black");
  };
  for (const file of graph.keys()) if (!colour.has(file)) visit(file, []);
  expect(graph.size).toBeGreaterThan(100);
  expect(cycles).toEqual([]);
});
