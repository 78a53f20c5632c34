/** Server configurations shared by the pool tests. */
import { fileURLToPath } from "node:url";
import type { ServerConfig } from "../../src/config/types.js";
import { isProcessAlive } from "../../src/mcp/process-tree.js";

/** The repository root: `--import tsx` resolves `tsx` from the child's working directory. */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The TypeScript stdio test server. */
export const testServerPath = fileURLToPath(new URL("../fixtures/servers/test-server.ts", import.meta.url));

/**
 * A complete `ServerConfig` with neutral defaults.
 * @param overrides fields to set
 */
export function serverConfig(
  overrides: Partial<ServerConfig> & Pick<ServerConfig, "id" | "transport">,
): ServerConfig {
  return { args: [], env: {}, headers: {}, enabled: true, tools: {}, ...overrides };
}

/**
 * The stdio test server run by this Node with tsx.
 * @param id server id
 * @param env TEST_SERVER_* variables
 */
export function stdioTestServer(id: string, env: Record<string, string> = {}): ServerConfig {
  return serverConfig({
    id,
    transport: "stdio",
    command: process.execPath,
    args: ["--import", "tsx", testServerPath],
    cwd: repoRoot,
    env,
  });
}

/** Whether a process with this pid exists (the pool's own probe). */
export const isAlive = isProcessAlive;
