/**
 * The one test configuration: a project per suite, selected with `--project` (package.json's scripts).
 * `npm test` runs `default`, as does `vitest run` without `--project`; the slow suites run one file at
 * a time (the examples excepted), each file in its own process.
 *
 * Every project shares test/harness/global-setup.ts (one temp folder and at most one PostgreSQL per
 * run) and test/harness/worker-setup.ts (the tracing SDK registered in each worker before any file).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * `sciencegate` and its subpaths resolve to their entry files in src/, as tsconfig.json's `paths` map
 * them for the type checker and tsx: tests and examples import the package by name, never a stale dist/.
 */
function packageAliases(): { find: RegExp; replacement: string }[] {
  const tsconfig = JSON.parse(readFileSync(new URL("./tsconfig.json", import.meta.url), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return Object.entries(tsconfig.compilerOptions.paths).map(([name, [target]]) => ({
    find: new RegExp(`^${name.replace("/", "\\/")}$`),
    replacement: fileURLToPath(new URL(target ?? "", import.meta.url)),
  }));
}

/**
 * The slow suites (project name = file suffix): where their files live, their time limits, and whether
 * files may run side by side (the others run one at a time).
 */
const SLOW: Record<
  string,
  { include: string; testTimeout: number; hookTimeout: number; parallel?: boolean }
> = {
  /** `*.faults.test.ts`: kill cycles, repeated SIGKILLs during writes (about 1 min). */
  faults: { include: "test/reliability/**/*.faults.test.ts", testTimeout: 120_000, hookTimeout: 60_000 },
  /** `*.package.test.ts`: npm pack, then the tarball installed in a fresh app (a few minutes). */
  package: { include: "test/packaging/**/*.package.test.ts", testTimeout: 300_000, hookTimeout: 120_000 },
  /** `*.server.test.ts`: the real LangGraph API dev server (about 20 s to start). */
  server: { include: "test/**/*.server.test.ts", testTimeout: 120_000, hookTimeout: 180_000 },
  /** `*.replicas.test.ts`: replica processes sharing one PostgreSQL (about 2 min). */
  replicas: { include: "test/**/*.replicas.test.ts", testTimeout: 180_000, hookTimeout: 60_000 },
  /** `*.examples.test.ts`: every guide run from the packed tarball in a fresh app (about 5–11 min). */
  examples: {
    include: "test/examples/**/*.examples.test.ts",
    testTimeout: 120_000,
    hookTimeout: 60_000,
    parallel: true,
  },
  /**
   * `*.conformance.test.ts`: clients and suites Sciencegate did not write judging it: the official MCP
   * conformance suite's client and server scenarios (several minutes; the suite's CLI runs on a Node.js 22
   * it installs once) and the MCP Inspector's CLI against the gateway.
   */
  conformance: {
    include: "test/conformance/**/*.conformance.test.ts",
    testTimeout: 1_800_000,
    hookTimeout: 600_000,
  },
  /** `*.browser.test.ts`: the console in headless Chromium over the demo's data directory. */
  browser: { include: "test/**/*.browser.test.ts", testTimeout: 120_000, hookTimeout: 180_000 },
};

const aliases = packageAliases();

function project(name: string, test: TestProjectInlineConfiguration["test"]): TestProjectInlineConfiguration {
  return {
    resolve: { alias: aliases },
    test: { name, pool: "forks", setupFiles: ["test/harness/worker-setup.ts"], ...test },
  };
}

/**
 * Whether the command line names projects. Without `--project`, `vitest run [files]` runs the default
 * suite only, as it always did: `npx vitest run test/runtime` must not start the replica processes.
 */
const projectsNamed = process.argv.some((arg) => arg === "--project" || arg.startsWith("--project="));

export default defineConfig({
  test: {
    globalSetup: ["test/harness/global-setup.ts"],
    projects: [
      project("default", {
        include: ["test/**/*.test.ts"],
        exclude: [
          "**/node_modules/**",
          "test/**/*.int.test.ts",
          ...Object.keys(SLOW).map((suite) => `test/**/*.${suite}.test.ts`),
        ],
        testTimeout: 30_000,
        hookTimeout: 30_000,
        // Vitest's default on 2 cores is one worker; the suite waits on child processes often enough
        // that two keep both cores busy.
        maxWorkers: Math.max(2, availableParallelism() - 1),
        // Files of one worker share the module graph (langchain, LangGraph, the MCP SDK load once per
        // worker, not once per file): a test must not rely on module state another file left.
        isolate: false,
      }),
      // Each slow suite in its own group, so that a run of several projects (`--project '*'` runs them
      // all) takes them one after the other, after the default suite.
      ...Object.entries(projectsNamed ? SLOW : {}).map(
        ([name, { include, testTimeout, hookTimeout, parallel }], i) =>
          project(name, {
            include: [include],
            testTimeout,
            hookTimeout,
            fileParallelism: parallel === true,
            sequence: { groupOrder: i + 1 },
          }),
      ),
    ],
  },
});
