/**
 * The published package in an app without the optional peers `langchain` and `tsx` and without vitest,
 * in the default suite (no npm, no network; `npm run test:package` checks the packed tarball the long
 * way): every entry point of package.json's `exports` type-checks under `strict`, `skipLibCheck: false`
 * and NodeNext, `createGovernedAgent`'s messages and the middleware are typed (not `any`), the entry
 * points load in plain Node (`sciencegate/testing` too: only `sciencegate/testing/conformance` needs
 * vitest), and a `science.toml` folder of TypeScript and Python tools without `tsx` keeps its Python tool.
 *
 * The package is built into a temp folder (never `dist/`) and installed as a real folder into a temp
 * app whose node_modules links every package of this repository's node_modules except `langchain`,
 * `tsx` and vitest. Of the
 * type packages the app has `@types/node` (a Node app's) and the `@types/*` dependencies of the package
 * (`better-sqlite3` and `pg`: the SQLite and PostgreSQL stores' declarations name them). The build skips type checking (`--noCheck`):
 * `npm run typecheck` does that; this test is about what the emitted declarations say.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, test } from "vitest";
import {
  CONSUMER_COMPILER_OPTIONS,
  consumerSource,
  entrySpecifiers,
  listFiles,
  type PackageJson,
  REPO,
  readJson,
} from "./packaging-harness.js";

const exec = promisify(execFile);
const MODULES = join(REPO, "node_modules");
const TSC = join(MODULES, "typescript", "bin", "tsc");
/** Left out of the app: the optional peers under test, and the test runner only the conformance suites need. */
const ABSENT = new Set(["langchain", "tsx", "vitest", "@vitest", ".bin", "@types"]);
/** `@types/node`, and the type packages the package depends on (an app installing it gets them). */
const typePackages = (pkg: PackageJson & { dependencies?: Record<string, string> }) => [
  "node",
  ...Object.keys(pkg.dependencies ?? {})
    .filter((name) => name.startsWith("@types/"))
    .map((name) => name.slice("@types/".length)),
];

/** What the harness's consumer does not say: the agent's state and the middleware are typed. */
const TYPED = `
import type { BaseMessage } from "@langchain/core/messages";
import { governanceMiddleware } from "sciencegate";

type AgentState = Awaited<ReturnType<ReturnType<typeof agent>["invoke"]>>;
declare const state: AgentState;
export const messages: BaseMessage[] = state.messages;
// @ts-expect-error the agent's messages are BaseMessage[], not any
export const notText: string = state.messages;

declare const governance: Governance;
const middleware = governanceMiddleware({ governance });
export const stateSchema = middleware.stateSchema;
// @ts-expect-error the middleware is typed, not any
export const notNumber: number = middleware.wrapToolCall;
`;

let app = "";
let packageDir = "";
let specifiers: string[] = [];

beforeAll(async () => {
  const temp = await mkdtemp(join(tmpdir(), "sciencegate-published-types-"));
  app = join(temp, "app");
  const modules = join(app, "node_modules");
  packageDir = join(modules, "sciencegate");
  await mkdir(join(modules, "@types"), { recursive: true });
  await mkdir(packageDir);
  await cp(join(REPO, "package.json"), join(packageDir, "package.json"));
  specifiers = entrySpecifiers(await readJson<PackageJson>(join(REPO, "package.json")));
  const outDir = join(packageDir, "dist");
  await exec(process.execPath, [TSC, "-p", "tsconfig.build.json", "--outDir", outDir, "--noCheck"], {
    cwd: REPO,
  });
  // The runtime assets tsc does not emit, as the build script copies them (the ledger's writer, the
  // Python bridge, the console's files): the steps below run the package, not only its declarations.
  const assets = (await listFiles(join(REPO, "src"))).filter(
    (f) => !/\.(?:[cm]?ts|tsx|md)$/i.test(f) && !/(^|\/)(__pycache__|\.)/.test(f),
  );
  for (const asset of assets) {
    await mkdir(dirname(join(outDir, asset)), { recursive: true });
    await cp(join(REPO, "src", asset), join(outDir, asset));
  }
  for (const name of await readdir(MODULES)) {
    if (!ABSENT.has(name)) await symlink(join(MODULES, name), join(modules, name));
  }
  const types = typePackages(await readJson(join(REPO, "package.json")));
  expect(types).toEqual(expect.arrayContaining(["node", "better-sqlite3", "pg"]));
  for (const name of types) await symlink(join(MODULES, "@types", name), join(modules, "@types", name));
  await writeFile(
    join(app, "package.json"),
    JSON.stringify({ name: "consumer", type: "module", private: true }),
  );
  await writeFile(
    join(app, "tsconfig.json"),
    JSON.stringify({ compilerOptions: CONSUMER_COMPILER_OPTIONS, files: ["consumer.ts"] }),
  );
  await writeFile(join(app, "consumer.ts"), `${consumerSource(specifiers)}${TYPED}`);
  return () => rm(temp, { recursive: true, force: true });
}, 180_000);

describe("the published package in an app without langchain", () => {
  test("no declaration file names langchain", async () => {
    const files = await readdir(join(packageDir, "dist"), { recursive: true });
    const naming: string[] = [];
    for (const file of files.filter((f) => f.endsWith(".d.ts"))) {
      const text = await readFile(join(packageDir, "dist", file), "utf8");
      if (/["']langchain["']/.test(text)) naming.push(file);
    }
    expect(naming).toEqual([]);
  });

  test("every entry point's declarations type-check with skipLibCheck: false, and messages are typed", {
    timeout: 120_000,
  }, async () => {
    const result = await exec(process.execPath, [TSC, "-p", "."], { cwd: app }).catch(
      (error: { stdout?: string; stderr?: string }) => error,
    );
    expect(`${result.stdout ?? ""}${result.stderr ?? ""}`).toBe("");
  });

  test("the entry points load in plain Node without langchain, tsx or vitest; only the conformance suites need vitest", {
    timeout: 60_000,
  }, async () => {
    const loaded = specifiers.filter((specifier) => !specifier.endsWith("/testing/conformance"));
    expect(loaded).toEqual(expect.arrayContaining(["sciencegate", "sciencegate/testing"]));
    const script = `for (const entry of ${JSON.stringify(loaded)}) await import(entry);
      for (const absent of ["langchain", "tsx", "vitest"])
        await import(absent).then(() => console.log(absent + " found"), () => console.log("no " + absent));
      await import("sciencegate/testing/conformance").then(
        () => console.log("conformance loaded"),
        (error) => console.log("conformance needs " + /Cannot find package '([^']+)'/.exec(error.message)?.[1]),
      );`;
    const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: app });
    expect(stdout.trim().split("\n")).toEqual([
      "no langchain",
      "no tsx",
      "no vitest",
      "conformance needs vitest",
    ]);
  });
});

describe("sciencegate/testing in a plain Node process, vitest not resolvable", () => {
  test("the fake providers, the manual clock and the scripted model work", { timeout: 60_000 }, async () => {
    const script = `
      import { ManualClock, ScriptedChatModel, startFakeProviderServer } from "sciencegate/testing";
      const providers = await startFakeProviderServer({ routes: [{ path: "/esearch", body: "found" }] });
      const answer = await (await fetch(providers.url + "/esearch")).text();
      await providers.close();
      const clock = new ManualClock(0);
      let fired = false;
      clock.sleep(1000).then(() => { fired = true; });
      await clock.advance(1000);
      const model = new ScriptedChatModel((_messages, turn) => ({ text: "turn " + turn }));
      const reply = await model.invoke("hi");
      console.log(JSON.stringify({ answer, fired, reply: reply.content }));`;
    const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({ answer: "found", fired: true, reply: "turn 0" });
  });
});

describe("local tools in plain Node without tsx", () => {
  test("a tools/ folder with a .ts and a .py file: the Python tool works, the warning names tsx and the file", {
    timeout: 120_000,
  }, async () => {
    const project = join(app, "science-project");
    await mkdir(join(project, "tools"), { recursive: true });
    await writeFile(join(project, "science.toml"), '[tools.local]\npath = "./tools"\n');
    await writeFile(
      join(project, "tools", "fit.ts"),
      "/** Doubles x. */\nexport function double(x: number): number {\n  return x * 2;\n}\n",
    );
    await writeFile(
      join(project, "tools", "fit_py.py"),
      'def triple(x: float) -> float:\n    """Triples x."""\n    return x * 3\n',
    );
    const script = `
      import { createGovernance } from "sciencegate";
      import { scienceExtension } from "sciencegate/adk";
      const science = await scienceExtension();
      const governance = await createGovernance({
        extensions: [science],
        storage: { dataDir: ".sciencegate" },
        onWarning: () => {},
      });
      try {
        const { value } = await science.callTool({ governance })("triple", { x: 2 });
        const names = governance.catalog.tools().map((t) => t.toolId);
        console.log(JSON.stringify({ warnings: governance.warnings, value, names }));
      } finally {
        await governance.close();
      }`;
    const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: project });
    const report = JSON.parse(stdout) as { warnings: string[]; value: unknown; names: string[] };
    expect(report.value).toBe(6);
    expect(report.names).toEqual(["triple"]);
    expect(report.warnings).toEqual([
      `warning: tool provider 'local': ${join(project, "tools", "fit.ts")} is skipped: its tools need tsx, ` +
        "which is not installed (npm install tsx: plain Node runs local TypeScript tools through tsx); " +
        "the folder's other tools are loaded.",
    ]);
  });
});
