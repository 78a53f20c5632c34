/**
 * A project folder for `sciencegate serve gateway` as a process: a config with the bundled sources
 * server (PubMed only, against loopback fake providers) and the stdio test server, whose tools a
 * manifest governs as source `local`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { bundledServerCommand } from "../../src/config/default-config.js";
import { REPO_ROOT, TSX_LOADER, tempDir, testServerEntry, writeJson } from "../cli/cli-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { upstreamServerPath } from "../mcp/upstream-fixture.js";

/** The CLI run from source, as the gateway's command line. */
export const GATEWAY_COMMAND = {
  command: process.execPath,
  args: ["--import", TSX_LOADER, join(REPO_ROOT, "src/cli/main.ts"), "serve", "gateway"],
};

/** A folder with a config and manifests, and the gateway's arguments and environment for it. */
export interface GatewayProject {
  dir: string;
  /** `--config FILE --manifests DIR` */
  args: string[];
  /** PATH, HOME and `SCIENCEGATE_HOME` in the folder, plus the given variables. */
  env: Record<string, string>;
  /** The data directory (ledger, grants) of the gateway. */
  dataDir: string;
}

/**
 * Writes the project.
 * @param options `sources`: add the bundled sources server (PubMed only); `dangerousEcho`: `echo` not
 *   declared read-only (a call to it needs a human); `env`: more variables (the fake providers' base URLs);
 *   `serverEnv`: the test server's variables; `upstreamEffects`: the upstream-input fixture as server `up`
 */
export function writeGatewayProject(
  options: {
    sources?: boolean;
    dangerousEcho?: boolean;
    env?: Record<string, string>;
    /** The test server's own environment (`TEST_SERVER_CALL_LOG`). */
    serverEnv?: Record<string, string>;
    /** Add the upstream-input fixture (2026-07-28 only) as server `up`, writing its effects here. */
    upstreamEffects?: string;
  } = {},
): GatewayProject {
  const dir = tempDir();
  const object = (properties: Record<string, object>) => ({ type: "object" as const, properties });
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  writeJson(
    manifests,
    "local.json",
    makeSource({
      id: "local",
      transport: { mcpServerId: "local" },
      // `stats` and `whoami` answer what the server is now.
      cache: { enabled: false, ttlSeconds: 0 },
      tools: [
        // Not declared read-only when asked: a call to it is dangerous and needs a human.
        makeTool({
          id: "echo",
          inputSchema: object({ text: { type: "string" } }),
          ...(options.dangerousEcho ? { readOnly: false } : {}),
        }),
        makeTool({ id: "whoami", inputSchema: object({}) }),
        makeTool({ id: "stats", inputSchema: object({}) }),
        makeTool({
          id: "slow",
          inputSchema: object({ steps: { type: "number" }, delayMs: { type: "number" } }),
        }),
        makeTool({ id: "add_tool", inputSchema: object({ name: { type: "string" } }) }),
        makeTool({ id: "late", inputSchema: object({}) }),
        makeTool({ id: "crash", readOnly: false, inputSchema: object({ message: { type: "string" } }) }),
      ],
    }),
  );
  const servers: Record<string, unknown> = { local: testServerEntry(options.serverEnv) };
  if (options.sources) {
    servers["sciencegate-sources"] = {
      type: "stdio",
      ...bundledServerCommand("sources", ["--only", "pubmed"]),
    };
  }
  if (options.upstreamEffects !== undefined) {
    servers.up = {
      command: process.execPath,
      args: ["--import", TSX_LOADER, upstreamServerPath, "--stdio", "--modern-only"],
      env: { UPSTREAM_EFFECTS: options.upstreamEffects },
    };
  }
  const config = writeJson(dir, "extensions_config.json", { mcpServers: servers });
  const dataDir = join(dir, ".sciencegate");
  return {
    dir,
    args: ["--config", config, "--manifests", manifests],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      SCIENCEGATE_HOME: dataDir,
      ...options.env,
    },
    dataDir,
  };
}
