/** Child processes, timed steps and package.json reading for the packaging test. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** The outcome of one child process. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The package.json fields the test reads (and the development-only ones it checks are gone). */
export interface PackageJson {
  name: string;
  version?: string;
  bin?: string | Record<string, string>;
  exports?: string | Record<string, string | Record<string, string>>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/**
 * The environment of every child: without the `npm_*` variables of an outer `npm run` (a nested npm reads
 * `npm_config_*` as its own settings) and without the caller's Sciencegate settings.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) || key.startsWith("SCIENCEGATE_") || key.startsWith("SCIENCE_AGENT_")) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to completion; a non-zero exit is a result, not a throw. */
export function run(command: string, args: string[], cwd: string, env = childEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const timings: { step: string; ms: number; ok: boolean }[] = [];
let firstStart: number | undefined;

/** Runs one step, assertions included, and prints how long it took and whether it passed. */
export async function step<T>(name: string, body: () => Promise<T>): Promise<T> {
  const started = performance.now();
  firstStart ??= started;
  let ok = false;
  try {
    const value = await body();
    ok = true;
    return value;
  } finally {
    const ms = Math.round(performance.now() - started);
    timings.push({ step: name, ms, ok });
    console.log(`[test:package] ${name}: ${ms} ms${ok ? "" : " (failed)"}`);
  }
}

/** The table of every step run so far, with the sum and the wall-clock time (steps may overlap). */
export function timingReport(): string {
  const row = (label: string, ms: number) => `${label} ${String(Math.round(ms)).padStart(7)} ms`;
  return [
    "[test:package] step timings:",
    ...timings.map((t) => `  ${row(t.ok ? "ok    " : "FAILED", t.ms)}  ${t.step}`),
    `  ${row(
      "sum   ",
      timings.reduce((sum, t) => sum + t.ms, 0),
    )}`,
    `  ${row("wall  ", firstStart === undefined ? 0 : performance.now() - firstStart)}`,
  ].join("\n");
}

export async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, "utf8")) as T;
}

/** Every file under `dir`, as `/`-separated paths relative to it. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** The files the `exports` map and the `bin` field point at. */
export function entryTargets(pkg: PackageJson): string[] {
  const targets: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") targets.push(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object") for (const v of Object.values(value)) collect(v);
  };
  collect(pkg.exports);
  collect(pkg.bin);
  return targets;
}

/** The import specifiers of the code entry points in `exports` (`./package.json` is data, not code). */
export function entrySpecifiers(pkg: PackageJson): string[] {
  const exportsMap = typeof pkg.exports === "string" ? { ".": pkg.exports } : (pkg.exports ?? {});
  return Object.keys(exportsMap)
    .filter((key) => key !== "./package.json")
    .map((key) => (key === "." ? pkg.name : `${pkg.name}/${key.replace(/^\.\//, "")}`));
}

/**
 * `npm pack` of the repository into `destination`. The pack rewrites the repository's package.json between
 * prepack and postpack, so two test files packing at once would clobber each other: a lock folder in the
 * repository serialises them (a stale one, left by a killed pack, is taken over after 15 minutes).
 */
export async function packRepo(destination: string): Promise<Run> {
  const lock = join(REPO, ".pack-lock");
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() - started > 15 * 60_000) break;
      await new Promise((wake) => setTimeout(wake, 1000));
    }
  }
  try {
    return await run("npm", ["pack", "--pack-destination", destination], REPO);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Gives the app's better-sqlite3 its native binding. Offline, its install script would compile SQLite
 * for minutes; the app reuses the binary the repository's own install built for the same version and
 * Node, and rebuilds only when that is not possible (an install that ran the script has it already).
 */
export async function provideSqliteBinding(app: string): Promise<void> {
  const binding = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
  if (existsSync(join(app, binding))) return;
  const version = async (root: string) =>
    (await readJson<PackageJson>(join(root, "node_modules", "better-sqlite3", "package.json"))).version;
  if (existsSync(join(REPO, binding)) && (await version(REPO)) === (await version(app))) {
    await mkdir(join(app, binding, ".."), { recursive: true });
    await cp(join(REPO, binding), join(app, binding));
    return;
  }
  const appJson = await readJson<PackageJson>(join(app, "package.json"));
  appJson.allowScripts = { ...(appJson.allowScripts as object), "better-sqlite3": true };
  await writeFile(join(app, "package.json"), `${JSON.stringify(appJson, null, 2)}\n`);
  const rebuilt = await run("npm", ["rebuild", "better-sqlite3"], app);
  if (rebuilt.code !== 0) throw new Error(`npm rebuild better-sqlite3 failed: ${rebuilt.stderr}`);
}

/** `name@version` as the repository has it installed, so the app resolves from the npm cache. */
export async function repoSpec(name: string): Promise<string> {
  const installed = join(REPO, "node_modules", name, "package.json");
  if (existsSync(installed)) return `${name}@${(await readJson<PackageJson>(installed)).version}`;
  const range = (await readJson<PackageJson>(join(REPO, "package.json"))).devDependencies?.[name];
  if (!range) throw new Error(`${name} is neither installed in the repository nor a devDependency`);
  return `${name}@${range}`;
}

/** The compiler options of a strict consumer app that checks the published declarations too. */
export const CONSUMER_COMPILER_OPTIONS = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  types: ["node"],
};

/**
 * A strict consumer module: every entry point imported, and the root's main names used with their types.
 * @param specifiers the entry points, e.g. `sciencegate`, `sciencegate/servers`
 */
export function consumerSource(specifiers: string[]): string {
  const imports = specifiers.map((s, i) => `import * as entry${i} from ${JSON.stringify(s)};`);
  return `${imports.join("\n")}
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph";
import {
  createGovernance,
  createGovernedAgent,
  type Governance,
  type GovernanceOptions,
  type GovernedAgentOptions,
  isGovernanceError,
} from "sciencegate";
import { scienceExtension } from "sciencegate/adk";

export const entryPoints = [${specifiers.map((_, i) => `entry${i}`).join(", ")}];

export async function meanRatio(dataDir: string): Promise<number> {
  const science = await scienceExtension({ path: "science.toml" });
  const options: GovernanceOptions = { extensions: [science], storage: { dataDir } };
  const governance: Governance = await createGovernance(options);
  try {
    const outcome = await science.callTool({ governance })("mean_ratio", { numerator: [1], denominator: [2] });
    const row = await governance.ledger.get(outcome.invocationId);
    return row?.status === "ok" ? Number(outcome.value) : Number.NaN;
  } catch (error) {
    if (isGovernanceError(error)) throw new Error(error.code, { cause: error });
    throw error;
  } finally {
    await governance.close();
  }
}

export function agent(model: BaseChatModel, governance: Governance) {
  const options: GovernedAgentOptions = { model, governance, checkpointer: new MemorySaver() };
  return createGovernedAgent(options);
}
`;
}
