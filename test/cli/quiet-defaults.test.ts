/**
 * With the user's own config, the CLI speaks of the user's servers: the bundled sources appear only
 * when their server is configured, and an error names each missing thing once.
 */
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT, runCli, tempDir, testServerEntry, writeJson } from "./cli-harness.js";

/** The real third-party `@modelcontextprotocol/server-filesystem`. */
const FILESYSTEM_SERVER = join(
  REPO_ROOT,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

describe("sciencegate tools with the user's own config", () => {
  test("lists only the configured servers' sources: no line about the bundled sources", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: { filesystem: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] } },
    });
    const json = await runCli(["tools", "--config", config, "--json"], {}, dir);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { sources: { id: string; status: string }[] };
    expect(report.sources).toEqual([expect.objectContaining({ id: "filesystem", status: "ready" })]);

    const human = await runCli(["tools", "--config", config], {}, dir);
    expect(human.code).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout).not.toMatch(/unavailable|sciencegate-sources|pubmed/);
  }, 60_000);
});

describe("an unknown tool name", () => {
  test("names an unavailable server once, however many of its sources are down", async () => {
    const dir = tempDir();
    // The bundled sources' server id, started with a command that fails: all twelve sources are down.
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: {
        "sciencegate-sources": { command: "sciencegate-no-such-command" },
        local: testServerEntry(),
      },
    });
    const run = await runCli(["call", "nosuchtool", "--config", config], {}, dir);
    expect(run.code).toBe(1);
    const error = run.stderr.split("\n").find((line) => line.startsWith("sciencegate call:")) ?? "";
    expect(error).toContain("No tool named 'nosuchtool'.");
    expect(error.match(/sciencegate-sources \(/g)).toHaveLength(1);
    // The start-up warning names it once too.
    expect(run.stderr.match(/^warning: server 'sciencegate-sources' unavailable: .*ENOENT/gm)).toHaveLength(
      1,
    );
  }, 60_000);
});
