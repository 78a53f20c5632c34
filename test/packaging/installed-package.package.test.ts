/**
 * `npm run test:package`: the package as users install it. Packs the repository, installs the tarball into
 * a fresh app next to the required peers, and drives it from there: the installed CLI on a `science.toml`
 * project with a TypeScript and a Python local tool, a strict type check of every `exports` entry point,
 * a governed call through the library API, the installed gateway serving the MCP SDK client, and the
 * installed console serving its pages. Each step
 * prints its time; the temp dirs go in any case.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestPostgres } from "../postgres/test-postgres.js";
import {
  CONSUMER_COMPILER_OPTIONS,
  childEnv,
  consumerSource,
  entrySpecifiers,
  entryTargets,
  listFiles,
  type PackageJson,
  packRepo,
  provideSqliteBinding,
  REPO,
  type Run,
  readJson,
  repoSpec,
  run,
  step,
  timingReport,
} from "./packaging-harness.js";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
/** Set to 1 to let better-sqlite3's install script compile SQLite in the app instead of reusing the repo's. */
const NATIVE_BUILD = process.env.SCIENCEGATE_PACKAGE_TEST_NATIVE_BUILD === "1";
const DEVELOPMENT_FIELDS = ["devDependencies", "allowScripts", "overrides", "scripts"];

let tmp = "";
let tarball = "";
let packed: PackageJson | undefined;
let app = "";
let project = "";

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sciencegate-package-"));
});

afterAll(async () => {
  // A pack that died between prepack and postpack leaves the cleaned package.json in place.
  if (existsSync(join(REPO, ".package.json.prepack"))) {
    await run(process.execPath, ["scripts/pack-manifest.mjs", "restore"], REPO);
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log(timingReport());
});

describe("the packed tarball, installed in a fresh app", () => {
  it("a. npm pack builds through prepack and leaves package.json byte-identical", async () => {
    const before = await readFile(join(REPO, "package.json"));
    await step("a. npm pack", async () => {
      const result = await packRepo(tmp);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr.split("\n").filter((line) => /^npm (warn|error)/i.test(line))).toEqual([]);
      expect(await readFile(join(REPO, "package.json"))).toEqual(before);
      const filename = result.stdout.trim().split("\n").pop() ?? "";
      expect(filename).toMatch(/\.tgz$/);
      tarball = join(tmp, filename);
    });
  });

  it("b. ships the entry points, runtime assets, CLI and manifests, without development fields", async () => {
    expect(tarball, "step a produced no tarball").not.toBe("");
    await step("b. inspect the tarball", async () => {
      const unpacked = join(tmp, "unpacked");
      await mkdir(unpacked);
      const untar = await run("tar", ["-xzf", tarball, "-C", unpacked], tmp);
      expect(untar.code, untar.stderr).toBe(0);
      const root = join(unpacked, "package");
      const files = new Set(await listFiles(root));
      const pkg = await readJson<PackageJson>(join(root, "package.json"));
      packed = pkg;

      const manifests = (await readdir(join(REPO, "manifests"))).filter((f) => f.endsWith(".json"));
      expect(manifests.length).toBeGreaterThan(0);
      // Whatever the build copies (non-TypeScript, non-Markdown files under src/) must ship under dist/.
      const assets = (await listFiles(join(REPO, "src"))).filter(
        (f) => !/\.(?:[cm]?ts|tsx|md)$/i.test(f) && !/(^|\/)(__pycache__|\.)/.test(f),
      );
      const required = [
        "dist/index.js",
        "dist/index.d.ts",
        "dist/adk/python/introspect.py",
        "bin/sciencegate.js",
        "README.md",
        ...manifests.map((f) => `manifests/${f}`),
        ...assets.map((f) => `dist/${f}`),
        ...entryTargets(pkg),
      ];
      expect(required.filter((f) => !files.has(f))).toEqual([]);
      expect(DEVELOPMENT_FIELDS.filter((field) => field in pkg)).toEqual([]);
    });
  });

  it("c. installs with the required peers only (no langchain)", { timeout: 900_000 }, async () => {
    expect(packed, "step b read no package.json").toBeDefined();
    const pkg = packed as PackageJson;
    app = join(tmp, "app");
    await mkdir(app);
    await step("c. npm init + npm install", async () => {
      const init = await run("npm", ["init", "-y"], app);
      expect(init.code, init.stderr).toBe(0);
      const appJson = await readJson<PackageJson>(join(app, "package.json"));
      appJson.type = "module";
      // Offline here, better-sqlite3's install script compiles SQLite for minutes; the app reuses the
      // binary the repository's own install built for the same version and Node (see NATIVE_BUILD).
      appJson.allowScripts = { "better-sqlite3": NATIVE_BUILD, esbuild: true };
      await writeFile(join(app, "package.json"), `${JSON.stringify(appJson, null, 2)}\n`);

      const peers = Object.keys(pkg.peerDependencies ?? {}).filter(
        (name) => pkg.peerDependenciesMeta?.[name]?.optional !== true,
      );
      expect(peers).not.toContain("langchain");
      // typescript for the consumer type check; typescript and tsx load local TypeScript tools (README).
      const specs = await Promise.all([...peers, "typescript", "tsx", "@types/node"].map(repoSpec));
      const flags = ["--no-audit", "--no-fund", "--prefer-offline"];
      const install = await run("npm", ["install", tarball, ...specs, ...flags], app);
      expect(install.code, install.stderr).toBe(0);
      expect(existsSync(join(app, "node_modules", "langchain"))).toBe(false);
      await provideSqliteBinding(app);
    });
    project = join(app, "science-project");
    await cp(join(FIXTURES, "science-project"), project, { recursive: true });
    await cp(join(FIXTURES, "governed-call.mjs"), join(app, "governed-call.mjs"));
    await cp(join(FIXTURES, "gateway-client.mjs"), join(app, "gateway-client.mjs"));
    for (const probe of [
      "hostile-server.mjs",
      "hardening-probes.mjs",
      "gateway-probes.mjs",
      "unclosed-runtime.mjs",
    ]) {
      await cp(join(FIXTURES, probe), join(app, probe));
    }
  });

  // One at a time: under load, parallel runs starve the local TypeScript provider's 30 s tools/list budget.
  describe("from the app", () => {
    it("d0. without a config, the installed CLI starts the bundled MCP servers from dist/", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      const empty = join(app, "no-config");
      await mkdir(empty);
      await step("d0. sciencegate tools --json (bundled servers)", async () => {
        const listed = await cli(["tools", "--json"], "bundled", empty);
        expect(listed.code, listed.stderr).toBe(0);
        const report = JSON.parse(listed.stdout) as ToolsReport;
        expect(report.servers.filter((s) => s.status !== "connected")).toEqual([]);
        expect(report.servers.length).toBeGreaterThan(0);
        expect(report.tools.length).toBeGreaterThan(0);
        expect(report.warnings).toEqual([]);
      });
    });

    it("d1. the installed CLI lists the TypeScript and the Python local tool", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      await step("d1. sciencegate tools --json", async () => {
        const listed = await cli(["tools", "--json"], "tools");
        expect(listed.code, listed.stderr).toBe(0);
        const report = JSON.parse(listed.stdout) as ToolsReport;
        expect(report.tools.map((t) => t.qualifiedName).sort()).toEqual([
          "local.mean_ratio",
          "pylocal.power_law_fit",
        ]);
        expect(report.warnings).toEqual([]);
      });
    });

    it.each([
      ["d2", "qualified", "local.mean_ratio", "pylocal.power_law_fit"],
      ["d3", "bare", "mean_ratio", "power_law_fit"],
    ])("%s. the installed CLI calls both tools by %s name", async (id, kind, meanRatio, powerLawFit) => {
      expect(project, "step c installed nothing").not.toBe("");
      await step(`${id}. sciencegate call <${kind} name> (x2)`, async () => {
        const [mean, fit] = await Promise.all([
          callCli(meanRatio, { numerator: [2, 6], denominator: [1, 2] }),
          callCli(powerLawFit, { x: [1, 2, 4], y: [3, 12, 48] }),
        ]);
        expect([mean.failure, fit.failure]).toEqual([undefined, undefined]);
        expect(mean.value).toBe(2.5);
        const { exponent, coefficient } = fit.value as { exponent: number; coefficient: number };
        expect(exponent).toBeCloseTo(2, 9);
        expect(coefficient).toBeCloseTo(3, 9);
      });
    });

    it("e. a strict consumer importing every entry point type-checks with skipLibCheck off", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      const installed = await readJson<PackageJson>(join(app, "node_modules", "sciencegate", "package.json"));
      const specifiers = entrySpecifiers(installed);
      expect(specifiers).toContain("sciencegate");
      await writeFile(
        join(app, "tsconfig.json"),
        JSON.stringify({ compilerOptions: CONSUMER_COMPILER_OPTIONS, files: ["consumer.ts"] }),
      );
      await writeFile(join(app, "consumer.ts"), consumerSource(specifiers));
      await step("e. tsc on the consumer (skipLibCheck false)", async () => {
        const tsc = join(app, "node_modules", "typescript", "bin", "tsc");
        const checked = await run(process.execPath, [tsc, "-p", "."], app);
        expect(checked.stdout.split("\n").filter((line) => line.trim() !== "")).toEqual([]);
        expect(checked.code, checked.stderr).toBe(0);
      });
    });

    it("f. a governed call through the library API is recorded in the ledger", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      await step("f. createGovernance + callTool + ledger", async () => {
        const scienceToml = join(project, "science.toml");
        const result = await run(
          process.execPath,
          ["governed-call.mjs", scienceToml, join(tmp, "lib-data")],
          app,
        );
        expect(result.code, result.stderr).toBe(0);
        const out = JSON.parse(result.stdout) as { value: unknown; invocationId: string; rows: unknown[] };
        expect(out.value).toBe(2.5);
        expect(out.rows).toContainEqual({
          invocationId: out.invocationId,
          status: "ok",
          sourceId: "local",
          toolId: "mean_ratio",
        });
      });
    });

    it("g. the installed gateway serves an MCP client: tool_search loads the local tool, which runs governed", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      await step("g. sciencegate serve gateway + SDK client", async () => {
        const home = join(tmp, "cli-homes", "gateway");
        const result = await run(
          process.execPath,
          ["gateway-client.mjs", join(project, "science.toml"), home],
          app,
        );
        expect(result.code, result.stderr).toBe(0);
        const seen = JSON.parse(result.stdout) as {
          before: string[];
          after: string[];
          changed: number;
          searchError: boolean;
          loaded?: string;
          callError: boolean;
          text?: string;
        };
        expect(seen.before).toContain("tool_search");
        expect(seen.before.some((name) => name.endsWith("mean_ratio"))).toBe(false);
        expect(seen.searchError).toBe(false);
        expect(seen.changed).toBeGreaterThan(0);
        expect(seen.loaded).toBeDefined();
        expect(seen.callError, seen.text).toBe(false);
        expect(seen.text).toContain("2.5");
        // The call has its ledger row in the gateway's data directory.
        const audit = await cli(["audit", "--json"], "gateway");
        expect(audit.code, audit.stderr).toBe(0);
        expect(audit.stdout).toContain("mean_ratio");
      });
    });

    it("h. the installed console serves its pages and assets from dist/ over the gateway's data directory", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      await step("h. sciencegate console + fetch", async () => {
        const bin = join(app, "node_modules", ".bin", "sciencegate");
        const child = spawn(bin, ["console", "--port", "0", "--config", join(project, "science.toml")], {
          cwd: project,
          env: childEnv({ SCIENCEGATE_HOME: join(tmp, "cli-homes", "gateway") }),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
        try {
          const url = await new Promise<string>((resolve, reject) => {
            let stdout = "";
            child.stdout.on("data", (chunk: Buffer) => {
              stdout += chunk.toString();
              const match = /Sciencegate console: (http:\/\/[^/\s]+)\//.exec(stdout);
              if (match?.[1]) resolve(match[1]);
            });
            exited.then((code) => reject(new Error(`sciencegate console exited ${code}: ${stderr}`)));
          });
          const sources = await fetch(`${url}/sources`);
          expect(sources.status).toBe(200);
          expect(await sources.text()).toContain("mean_ratio");
          const css = await fetch(`${url}/assets/console.css`);
          expect(css.status).toBe(200);
          expect(await css.text()).toContain("color-scheme: light dark");
          const invocations = await fetch(`${url}/invocations?tool=mean_ratio`);
          expect(invocations.status, stderr).toBe(200);
          expect(await invocations.text()).toMatch(/1 invocation match/);
          child.kill("SIGTERM");
          expect(await exited, stderr).toBe(0);
        } finally {
          child.kill("SIGKILL");
        }
      });
    });

    it("i. the installed CLI: a misspelt server is one warning naming it, and a command's --help is its usage", async () => {
      expect(project, "step c installed nothing").not.toBe("");
      const own = join(app, "own-config");
      await mkdir(own);
      const config = join(own, "extensions_config.json");
      await writeFile(
        config,
        JSON.stringify({ mcpServers: { files: { command: "sciencegate-no-such-command" } } }),
      );
      await step("i. sciencegate tools (a misspelt server) + extract --help", async () => {
        const listed = await cli(["tools", "--config", config], "misspelt", own);
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stderr).toBe(
          "warning: server 'files' unavailable: could not be started: spawn sciencegate-no-such-command ENOENT\n",
        );
        // The user's own config: no line about the bundled sources.
        expect(listed.stdout).not.toMatch(/pubmed|sciencegate-sources/);
        const help = await cli(["extract", "--help"], "help", own);
        expect(help.code).toBe(0);
        expect(help.stdout).toContain("Usage of sciencegate extract:");
      });
    });

    // The hardening probes, against what users install: a hostile stdio server, an embedded PostgreSQL.
    describe("j. hardening probes", () => {
      let hostileConfig = "";
      beforeAll(async () => {
        if (!app) return;
        hostileConfig = join(app, "hostile-config.json");
        const server = { command: process.execPath, args: [join(app, "hostile-server.mjs")] };
        await writeFile(hostileConfig, JSON.stringify({ mcpServers: { hostile: server } }));
      });

      it("j1. PostgreSQL: connections killed under 8 callers lose no row; a NUL in an error or a session id is stored", async () => {
        expect(project, "step c installed nothing").not.toBe("");
        const postgres = await openTestPostgres();
        try {
          const url = await postgres.createDatabase();
          await step("j1. connection kills + NUL on PostgreSQL", async () => {
            const result = await run(
              process.execPath,
              ["hardening-probes.mjs", url, join(tmp, "probe-data"), join(app, "hostile-server.mjs")],
              app,
            );
            expect(result.code, result.stderr).toBe(0);
            const seen = JSON.parse(result.stdout) as HardeningProbes;
            console.log(`[test:package] j1. ${JSON.stringify(seen.kills)}`);
            expect(seen.kills.killed, "the killer ended no connection").toBeGreaterThan(0);
            expect(seen.kills.calls).toBeGreaterThan(0);
            expect(seen.kills.withoutRow).toBe(0);
            expect(seen.kills.rows).toBe(seen.kills.calls);
            expect(seen.kills.distinctKeys).toBe(seen.kills.rows);
            expect(seen.nul.code).toBe("TOOL_FAILED");
            expect(seen.nul.rows).toHaveLength(1);
            const [row] = seen.nul.rows;
            expect(row?.invocationId).toBe(seen.nul.invocationId);
            expect(row?.sessionId).toBe("nul\u0000session");
            expect(row?.status).toBe("error");
            expect(JSON.parse(row?.error ?? "null")?.message).toBe(
              "bad\u0000thing \u001b]0;pwned\u0007\r\nOK: all clear",
            );
          });
        } finally {
          await postgres.stop();
        }
      });

      it("j2. the gateway over HTTP: the session id a ledger row shows acts on nothing; tool_search echoes no live tag", async () => {
        expect(project, "step c installed nothing").not.toBe("");
        const home = join(tmp, "cli-homes", "probes");
        await step("j2. gateway probes (HTTP)", async () => {
          const result = await run(process.execPath, ["gateway-probes.mjs", hostileConfig, home], app);
          expect(result.code, result.stderr).toBe(0);
          const seen = JSON.parse(result.stdout) as GatewayProbes;
          expect(seen.tools).toContain("mcp__hostile__search");
          // The derived tool needs approval and this client cannot be asked: refused, nothing run.
          expect(seen.firstError).toBe(true);
          expect(seen.firstText).toContain("Nothing was executed");
          expect(seen.ledgerSession).toMatch(/^gateway:[0-9a-f-]{36}$/);
          expect(seen.ledgerSession).not.toContain(seen.transportSession);
          expect([seen.asShown, seen.asShownBare, seen.deleteShown]).toEqual([404, 404, 404]);
          expect(seen.stolenRows).toBe(0);
          expect(seen.echoText).toContain("notFound");
          expect(seen.echoText).not.toMatch(/<\/?system>|<\/available-deferred-tools>/);
          // The owner's session survived the DELETE under the shown id.
          expect(seen.secondError).toBe(true);
          expect(seen.rowsAfter).toBe(2);
        });
        await step("j2. the store's modes", async () => {
          const modes = await Promise.all(
            [home, join(home, "ledger.sqlite"), join(home, "grants.sqlite")].map(
              async (path) => (await stat(path)).mode & 0o777,
            ),
          );
          expect(modes).toEqual([0o700, 0o600, 0o600]);
        });
      });

      it("j4. a script that never closes its runtime exits by itself, every call's row kept", async () => {
        expect(project, "step c installed nothing").not.toBe("");
        const home = join(tmp, "cli-homes", "unclosed");
        await step("j4. unclosed runtime exits", async () => {
          const result = await run(
            process.execPath,
            ["unclosed-runtime.mjs", home, join(app, "hostile-server.mjs")],
            app,
          );
          const exitedMs = Date.now();
          expect(result.code, result.stderr).toBe(0);
          const { lastAwaitMs } = JSON.parse(result.stdout) as { lastAwaitMs: number };
          console.log(`[test:package] j4. exited ${exitedMs - lastAwaitMs} ms after its last await`);
          expect(exitedMs - lastAwaitMs).toBeLessThan(10_000);
          const audit = await cli(["audit", "--json", "--session", "unclosed"], "unclosed");
          expect(audit.code, audit.stderr).toBe(0);
          expect(audit.stdout.match(/"toolCallId":\s*"call-\d"/g)?.length).toBe(3);
        });
      });

      it("j3. the installed CLI prints a hostile server's error without live escapes; a wiki URL's path stays hidden", async () => {
        expect(project, "step c installed nothing").not.toBe("");
        await step("j3. sciencegate call (hostile error) + serve llm-wiki (capability URL)", async () => {
          const failed = await cli(
            ["call", "hostile.fail_nul", "--config", hostileConfig, "--args", "{}", "--approve", "once"],
            "probe-call",
          );
          expect(failed.code).toBe(1);
          const printed = failed.stdout + failed.stderr;
          expect(printed).toContain("TOOL_FAILED");
          expect(printed).toContain("\\u001b]0;pwned\\u0007\\r\\nOK: all clear");
          // biome-ignore lint/suspicious/noControlCharactersInRegex: the raw controls are what must not be printed
          expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
          const bin = join(app, "node_modules", ".bin", "sciencegate");
          const wiki = await run(
            bin,
            ["serve", "llm-wiki"],
            project,
            childEnv({
              SCIENCEGATE_HOME: join(tmp, "cli-homes", "probe-wiki"),
              SCIENCE_AGENT_LLM_WIKI_URL: "http://127.0.0.1:9/capability-SECRET",
            }),
          );
          expect(wiki.code).not.toBe(0);
          expect(wiki.stderr).toContain("INVALID_CONFIG");
          expect(wiki.stdout + wiki.stderr).not.toContain("SECRET");
        });
      });
    });
  });
});

/** What `hardening-probes.mjs` prints. */
interface HardeningProbes {
  kills: {
    calls: number;
    ok: number;
    codes: string[];
    rows: number;
    distinctKeys: number;
    withoutRow: number;
    killed: number;
  };
  nul: {
    code: string;
    invocationId?: string;
    rows: { invocationId: string; sessionId: string; status: string; error: string }[];
  };
}

/** What `gateway-probes.mjs` prints. */
interface GatewayProbes {
  tools: string[];
  transportSession: string;
  ledgerSession: string;
  firstError: boolean;
  firstText: string;
  asShown: number;
  asShownBare: number;
  deleteShown: number;
  echoText: string;
  secondError: boolean;
  stolenRows: number;
  rowsAfter: number;
}

/** The parts of `sciencegate tools --json` the test reads. */
interface ToolsReport {
  servers: { id: string; status: string }[];
  tools: { qualifiedName: string }[];
  warnings: string[];
}

/** Runs the installed `sciencegate` (in the project by default), with `SCIENCEGATE_HOME` in the temp dir. */
function cli(args: string[], home: string, cwd = project): Promise<Run> {
  const bin = join(app, "node_modules", ".bin", "sciencegate");
  return run(bin, args, cwd, childEnv({ SCIENCEGATE_HOME: join(tmp, "cli-homes", home) }));
}

/** `sciencegate call NAME --args JSON --json`: the tool's value, or why the call failed. */
async function callCli(
  name: string,
  args: Record<string, unknown>,
): Promise<{ value?: unknown; failure?: string }> {
  const result = await cli(["call", name, "--args", JSON.stringify(args), "--json"], `call-${name}`);
  if (result.code !== 0)
    return { failure: `sciencegate call ${name}: exit ${result.code}: ${result.stderr.trim()}` };
  const body = JSON.parse(result.stdout) as {
    result: { data?: { structuredContent?: { result?: unknown } } };
  };
  return { value: body.result.data?.structuredContent?.result };
}
