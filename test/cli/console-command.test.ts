/**
 * `sciencegate console`: the real CLI process serves the console over the data directory, read-only
 * unless --writable, prints where, refuses a bad port or a wide bind without a token, and stops cleanly
 * on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { REPO_ROOT, runCli, TSX_LOADER, tempDir, writeJson } from "./cli-harness.js";

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

/** Starts the CLI and waits for the URL it prints. */
async function startConsole(
  args: string[],
  setup: (dir: string) => string[] = () => [],
): Promise<{ url: string; stderr: () => string; exit: Promise<number | null> }> {
  const dir = tempDir();
  const extra = setup(dir);
  const proc = spawn(
    process.execPath,
    ["--import", TSX_LOADER, join(REPO_ROOT, "src/cli/main.ts"), "console", ...args, ...extra],
    {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(dir, ".sciencegate") },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child = proc;
  let stderr = "";
  proc.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    proc.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /Sciencegate console: (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    exit.then((code) => reject(new Error(`console exited ${code}: ${stderr}`)));
  });
  return { url, stderr: () => stderr, exit };
}

test("serves the console read-only, and stops on SIGTERM with exit 0", async () => {
  const consoleProcess = await startConsole(["--port", "0"]);
  const page = await fetch(`${consoleProcess.url}/sources`);
  expect(page.status).toBe(200);
  const body = await page.text();
  expect(body).toContain("Sources and tools");
  expect(body).toContain("mcp__pubmed__search");
  expect(body).toContain(">read-only<");
  expect(consoleProcess.stderr()).toContain("read-only; data ");
  child?.kill("SIGTERM");
  expect(await consoleProcess.exit).toBe(0);
  expect(consoleProcess.stderr()).toContain("stopping (SIGTERM)");
});

test("--writable shows the console as writable (a config without servers: nothing to start)", async () => {
  const consoleProcess = await startConsole(["--port", "0", "--writable"], (dir) => [
    "--config",
    writeJson(dir, "extensions_config.json", { mcpServers: {} }),
  ]);
  expect(await (await fetch(`${consoleProcess.url}/sources`)).text()).toContain(">writable<");
  child?.kill("SIGTERM");
  expect(await consoleProcess.exit).toBe(0);
});

test("a bad port, or a wide bind without SCIENCEGATE_CONSOLE_TOKEN, is a usage error naming the fix", async () => {
  const port = await runCli(["console", "--port", "http"]);
  expect(port.code).toBe(2);
  expect(port.stderr).toContain("--port takes a number from 0 to 65535");
  const wide = await runCli(["console", "--host", "0.0.0.0", "--port", "0"]);
  expect(wide.code).toBe(2);
  expect(wide.stderr).toContain("SCIENCEGATE_CONSOLE_TOKEN");
});
