/**
 * Every TypeScript block in the repository's Markdown (README.md, the docs site in docs/, ...) compiles as
 * a user would paste it. Each ```ts or ```typescript block becomes its own ES module in one program (one
 * program so the library types are checked once), with the compiler options of tsconfig.json and
 * `sciencegate` / `sciencegate/<subpath>` mapped to `src/index.ts` / `src/<subpath>/index.ts`. Diagnostics are reported at their Markdown line.
 * A block whose fence is preceded by the line `<!-- fragment -->` (a type signature or a shape, not a
 * program) is only parsed.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, test } from "vitest";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const FRAGMENT_MARKER = "<!-- fragment -->";
const TS_LANGUAGES = new Set(["ts", "typescript"]);
const SKIPPED_DIRS = new Set(["node_modules", "dist", "coverage"]);

interface Snippet {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The nearest heading above the block. */
  heading: string;
  /** The 1-based line of the opening fence; the code starts on the next line. */
  fenceLine: number;
  code: string;
  isFragment: boolean;
}

function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  let heading = "(before any heading)";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const open = /^\s*(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
    if (!open) {
      heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1] ?? heading;
      continue;
    }
    const fence = open[1] ?? "```";
    const close = new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end] ?? "")) end++;
    if (TS_LANGUAGES.has((open[2] ?? "").toLowerCase())) {
      snippets.push({
        file,
        heading,
        fenceLine: i + 1,
        code: lines.slice(i + 1, end).join("\n"),
        isFragment: lines[i - 1]?.trim() === FRAGMENT_MARKER,
      });
    }
    i = end;
  }
  return snippets;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.isFile() && entry.name.endsWith(".md") ? [relative(repoRoot, path)] : [];
  });
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(repoRoot, "tsconfig.json");
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  const { options, errors } = ts.parseJsonConfigFileContent(config, ts.sys, repoRoot, undefined, configPath);
  if (errors.length > 0)
    throw new Error(errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, "\n")).join("\n"));
  // tsconfig.json maps `sciencegate` and each of its subpaths to their entry in src/, as examples use them.
  return { ...options, noEmit: true };
}

function formatDiagnostic(diagnostic: ts.Diagnostic, snippet: Snippet): string {
  const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
  if (diagnostic.file === undefined || diagnostic.start === undefined) return `${snippet.file}: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  return `${snippet.file}:${snippet.fenceLine + 1 + line}:${character + 1} ${message}`;
}

/**
 * Type-checks the snippets as modules of one program and returns each one's diagnostics, formatted with
 * Markdown lines. The modules live in a folder of the repository that exists only in the compiler host,
 * so that `package.json` (ESM) and `node_modules` resolve as they do for the repository's own files.
 */
function checkSnippets(snippets: readonly Snippet[]): Map<Snippet, string[]> {
  const options = compilerOptions();
  const virtualDir = join(repoRoot, "test/docs/__snippets__");
  // A trailing `export {}` makes every block a module (top-level await) without moving its lines.
  const sources = new Map(
    snippets.map((s, i) => [join(virtualDir, `snippet-${i}.ts`), `${s.code}\nexport {};\n`]),
  );
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => sources.has(name) || fileExists.call(host, name);
  host.readFile = (name) => sources.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const text = sources.get(name);
    if (text === undefined) return getSourceFile.call(host, name, languageVersion, ...rest);
    return ts.createSourceFile(name, text, languageVersion, true);
  };
  const program = ts.createProgram({ rootNames: [...sources.keys()], options, host });
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (global.length > 0) throw new Error(ts.formatDiagnostics(global, host));
  return new Map(
    [...sources.keys()].map((name, i) => {
      const snippet = snippets[i]!;
      const file = program.getSourceFile(name)!;
      const diagnostics = snippet.isFragment
        ? program.getSyntacticDiagnostics(file)
        : [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
      return [snippet, diagnostics.map((d) => formatDiagnostic(d, snippet))];
    }),
  );
}

const documented = markdownFiles(repoRoot).flatMap((file) =>
  extractSnippets(readFileSync(join(repoRoot, file), "utf8"), file),
);

const FIXTURE = [
  "# Wrong",
  "```ts",
  "const xs = [1, 2];",
  "const first: number = xs[0];",
  "```",
  "## Right",
  "```typescript",
  'import { createGovernance } from "sciencegate";',
  'import { ManualClock } from "sciencegate/testing";',
  "const governance: typeof createGovernance = createGovernance;",
  "await new ManualClock(0).sleep(0);",
  "```",
  "```js",
  "const notChecked = ;",
  "```",
  FRAGMENT_MARKER,
  "~~~ts",
  "type Shape = { governance: Governance };",
  "~~~",
  FRAGMENT_MARKER,
  "```ts",
  "const broken = ;",
  "```",
].join("\n");
const fixture = extractSnippets(FIXTURE, "fixture.md");

let diagnosticsOf = new Map<Snippet, string[]>();
// The fixture blocks join the documented ones in the same program: a second program would double the time.
beforeAll(() => {
  diagnosticsOf = checkSnippets([...documented, ...fixture]);
  // README.md and docs/ together: about 50 s on a loaded 2-core machine.
}, 180_000);

describe("TypeScript blocks in the repository's Markdown compile", () => {
  test("README.md has TypeScript blocks", () => {
    expect(documented.filter((s) => s.file === "README.md").length).toBeGreaterThan(0);
  });

  test("the docs site's pages (docs/) have TypeScript blocks", () => {
    expect(documented.filter((s) => s.file.startsWith("docs/")).length).toBeGreaterThan(10);
  });

  test.each(
    documented.map(
      (s) => [`${s.file}:${s.fenceLine} ${s.heading}${s.isFragment ? " (fragment)" : ""}`, s] as const,
    ),
  )("%s", (_name, snippet) => {
    expect(diagnosticsOf.get(snippet)).toEqual([]);
  });
});

describe("the snippet checker", () => {
  test("extracts ts and typescript blocks with their heading, fence line and fragment marker", () => {
    expect(fixture.map(({ heading, fenceLine, isFragment }) => ({ heading, fenceLine, isFragment }))).toEqual(
      [
        { heading: "Wrong", fenceLine: 2, isFragment: false },
        { heading: "Right", fenceLine: 7, isFragment: false },
        { heading: "Right", fenceLine: 17, isFragment: true },
        { heading: "Right", fenceLine: 21, isFragment: true },
      ],
    );
  });

  test("reports a type error under the repository's strict options at its Markdown line", () => {
    expect(diagnosticsOf.get(fixture[0]!)).toEqual([
      "fixture.md:4:7 TS2322: Type 'number | undefined' is not assignable to type 'number'.\n" +
        "  Type 'undefined' is not assignable to type 'number'.",
    ]);
  });

  test("resolves sciencegate and its subpaths to src/ and allows top-level await", () => {
    expect(diagnosticsOf.get(fixture[1]!)).toEqual([]);
  });

  test("only parses a fragment", () => {
    expect(diagnosticsOf.get(fixture[2]!)).toEqual([]);
    expect(diagnosticsOf.get(fixture[3]!)).toEqual(["fixture.md:22:16 TS1109: Expression expected."]);
  });
});
