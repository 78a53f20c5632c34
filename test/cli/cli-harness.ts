/** Runs the CLI in-process with captured output. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { main } from "../../src/cli/main.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");
export const TSX_LOADER = import.meta.resolve("tsx");
export const TEST_SERVER = join(REPO_ROOT, "test/fixtures/servers/test-server.ts");
export const EVERYTHING_SERVER = join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

/** The outcome of one CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `sciencegate <argv>` in this process.
 * @param argv the arguments
 * @param env extra environment
 * @param cwd working directory (default: a fresh temp dir, so no stray config is found)
 */
export async function runCli(
  argv: string[],
  env: Record<string, string> = {},
  cwd = tempDir(),
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SCIENCEGATE_HOME: join(cwd, ".sciencegate"),
      ...env,
    },
    cwd,
    isTty: false,
  });
  return { code, stdout, stderr };
}

/** A fresh temporary directory. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "sciencegate-cli-"));
}

/**
 * Writes a JSON file and returns its path.
 * @param dir folder
 * @param name file name
 * @param value content
 */
export function writeJson(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** A stdio server entry that runs the pool test server through tsx. */
export function testServerEntry(env: Record<string, string> = {}): Record<string, unknown> {
  return { command: process.execPath, args: ["--import", TSX_LOADER, TEST_SERVER], env };
}

/**
 * Writes `<dir>/manifests/echo.json`: source `echo-source` on server `local` (the test server) with a
 * tool `echo` the server has and a tool `gone` it does not have.
 * @returns the manifests folder
 */
export function writeEchoManifests(dir: string): string {
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  writeJson(
    manifests,
    "echo.json",
    makeSource({
      id: "echo-source",
      transport: { mcpServerId: "local" },
      tools: [
        makeTool({
          id: "echo",
          mcpToolName: "echo",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        }),
        makeTool({ id: "gone", mcpToolName: "not_on_server" }),
      ],
    }),
  );
  return manifests;
}
