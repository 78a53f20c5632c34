/** The dual-revision upstream fixture server (`test/fixtures/servers/upstream-input-server.ts`) for tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerConfig } from "../../src/config/types.js";
import { repoRoot, serverConfig } from "./server-configs.js";

/** The fixture's source file. */
export const upstreamServerPath = fileURLToPath(
  new URL("../fixtures/servers/upstream-input-server.ts", import.meta.url),
);

/** Where a fixture writes its `start`, `attempt` and `effect` lines, and a reader of them. */
export function effectsFile(): { path: string; lines: () => string[] } {
  const path = join(mkdtempSync(join(tmpdir(), "sciencegate-upstream-")), "effects.log");
  return {
    path,
    lines: () => {
      try {
        return readFileSync(path, "utf8").split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}

/**
 * The fixture over stdio.
 * @param id server id
 * @param options whether it serves 2026-07-28 only, its effects file, and config overrides
 */
export function stdioUpstream(
  id: string,
  options: { modernOnly?: boolean; effects?: string; config?: Partial<ServerConfig> } = {},
): ServerConfig {
  return serverConfig({
    id,
    transport: "stdio",
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      upstreamServerPath,
      "--stdio",
      ...(options.modernOnly ? ["--modern-only"] : []),
    ],
    cwd: repoRoot,
    env: options.effects === undefined ? {} : { UPSTREAM_EFFECTS: options.effects },
    ...options.config,
  });
}

/**
 * The fixture over streamable HTTP on a free loopback port.
 * @param options whether it serves 2026-07-28 only, and its effects file
 * @returns its `/mcp` URL and a stop function
 */
export async function httpUpstream(
  options: { modernOnly?: boolean; effects?: string } = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", upstreamServerPath, "--http", "0", ...(options.modernOnly ? ["--modern-only"] : [])],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        ...process.env,
        ...(options.effects === undefined ? {} : { UPSTREAM_EFFECTS: options.effects }),
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening (\d+)/.exec(seen);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
