/**
 * The published declarations in an app without the optional peer `langchain`, in the default suite
 * (no npm, no network; `npm run test:package` checks the packed tarball the long way): every entry
 * point of package.json's `exports` type-checks under `strict`, `skipLibCheck: false` and NodeNext,
 * `createGovernedAgent`'s messages and the middleware are typed (not `any`), and the entry points load.
 *
 * The package is built into a temp folder (never `dist/`) and installed as a real folder into a temp
 * app whose node_modules links every package of this repository's node_modules except `langchain`
 * and vitest. So `sciencegate/testing`'s declarations are checked without vitest (they do not need
 * it); its conformance suites import vitest at run time, so that entry is not loaded here. Of the
 * type packages the app has `@types/node` (a Node app's) and the `@types/*` dependencies of the package
 * (`better-sqlite3` and `pg`: the SQLite and PostgreSQL stores' declarations name them). The build skips type checking (`--noCheck`):
 * `npm run typecheck` does that; this test is about what the emitted declarations say.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, test } from "vitest";
import {
  CONSUMER_COMPILER_OPTIONS,
  consumerSource,
  entrySpecifiers,
  type PackageJson,
  REPO,
  readJson,
} from "./packaging-harness.js";

const exec = promisify(execFile);
const MODULES = join(REPO, "node_modules");
const TSC = join(MODULES, "typescript", "bin", "tsc");
/** Left out of the app: the optional peer under test, and the test runner `sciencegate/testing` names. */
const ABSENT = new Set(["langchain", "vitest", "@vitest", ".bin", "@types"]);
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
const middleware = governanceMiddleware(governance);
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

  test("the entry points load without langchain", { timeout: 60_000 }, async () => {
    const loaded = specifiers.filter((specifier) => !specifier.endsWith("/testing"));
    expect(loaded).toContain("sciencegate");
    const script = `for (const entry of ${JSON.stringify(loaded)}) await import(entry);
      await import("langchain").then(() => console.log("langchain found"), () => console.log("no langchain"));`;
    const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: app });
    expect(stdout.trim()).toBe("no langchain");
  });
});
