/**
 * What the console's browser tests share: a real headless Chromium (Debian's, through playwright-core),
 * screenshots into test-output/console/, and a data directory produced by running the offline demo.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";

const root = resolve(import.meta.dirname, "../../..");

/** Where screenshots go (kept after the run; `test-output/` is ignored by git). */
export const SCREENSHOT_DIR = join(root, "test-output", "console");

/** The Chromium binary: `SCIENCEGATE_CHROMIUM`, else Debian's. */
export const CHROMIUM = process.env.SCIENCEGATE_CHROMIUM || "/usr/bin/chromium";

/**
 * Launches headless Chromium.
 * @throws when the binary is missing, naming the install command
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install it with "apt-get install -y chromium" (.ci/run does) or set SCIENCEGATE_CHROMIUM.`,
    );
  }
  // As root, Chromium's sandbox cannot start; the pages are our own console on loopback.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

/**
 * Saves a full-page screenshot as test-output/console/<name>.png.
 * @returns the file's path
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Runs the offline demo (`examples/demo.ts`) with its data kept in `dataDir`.
 * @returns the agent's final answer and the demo's output
 */
export async function runOfflineDemo(dataDir: string): Promise<{ answer: string; output: string }> {
  const answerFile = join(dataDir, "..", "demo-answer.md");
  const tsx = join(root, "node_modules", ".bin", "tsx");
  const { stdout } = await promisify(execFile)(
    tsx,
    [join(root, "examples", "demo.ts"), "--data-dir", dataDir, "--answer-file", answerFile],
    { cwd: root, timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, CI: "1" } },
  );
  return { answer: readFileSync(answerFile, "utf8"), output: stdout };
}
