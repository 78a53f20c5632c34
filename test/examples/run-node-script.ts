/** Runs a TypeScript script in its own Node process, as a user would with `npx tsx <file>`. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";

/** The repository root: scripts run from here, so `tsx` and the package aliases resolve. */
export const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** What the process did. */
export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `node --import tsx <args>` with stdin not a TTY, killing it after `timeoutMs`.
 * @param args the script and its arguments
 * @param options environment and time limit
 * @returns exit code, output and wall time
 */
export function runNodeScript(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ScriptRun> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--import", "tsx", ...args], {
      cwd: REPO_ROOT,
      env: options.env ?? process.env,
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
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}
