import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  EVERYTHING_SERVER,
  runCli,
  tempDir,
  testServerEntry,
  writeEchoManifests,
  writeJson,
} from "./cli-harness.js";

interface Report {
  servers: { id: string; transport: string; status: string; reason?: string; stderrTail?: string[] }[];
  sources: {
    id: string;
    status: string;
    availableTools: string[];
    missingTools: { toolId: string; reason: string }[];
  }[];
  tools: { name: string; qualifiedName: string; sourceId: string; toolId: string; readOnly: boolean }[];
}

describe("sciencegate tools", () => {
  test("--json lists servers, sources with missing tools, and model-visible names; a dead server is a warning", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: {
        local: testServerEntry(),
        broken: testServerEntry({ TEST_SERVER_FAIL_AT_START: "boot failed: missing database|second line" }),
        off: { ...testServerEntry(), enabled: false },
      },
    });
    const run = await runCli(["tools", "--config", config, "--manifests", writeEchoManifests(dir), "--json"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("warning: server 'broken' unavailable");
    const report = JSON.parse(run.stdout) as Report;
    expect(report.servers.map((s) => [s.id, s.status])).toEqual([
      ["local", "connected"],
      ["broken", "failed"],
      ["off", "disabled"],
    ]);
    expect(report.servers[1]?.stderrTail).toEqual(["boot failed: missing database", "second line"]);
    const echo = report.sources.find((s) => s.id === "echo-source");
    expect(echo).toMatchObject({ status: "degraded", availableTools: ["echo"] });
    expect(echo?.missingTools.map((m) => m.toolId)).toEqual(["gone"]);
    expect(report.sources.find((s) => s.id === "broken")?.status).toBe("unavailable");
    const names = report.tools.map((t) => t.name);
    expect(names).toContain("mcp__echo-source__echo");
    expect(names).not.toContain("mcp__echo-source__gone");
    expect(report.tools.find((t) => t.name === "mcp__echo-source__echo")).toMatchObject({
      qualifiedName: "echo-source.echo",
      readOnly: true,
    });
  });

  test("lists the real third-party @modelcontextprotocol/server-everything over stdio", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] } },
    });
    const run = await runCli(["tools", "--config", config, "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.servers).toEqual([{ id: "everything", transport: "stdio", status: "connected" }]);
    expect(report.sources.find((s) => s.id === "everything")?.status).toBe("ready");
    const names = report.tools.filter((t) => t.sourceId === "everything").map((t) => t.name);
    expect(names).toContain("mcp__everything__echo");
    expect(names.length).toBeGreaterThan(5);
  });

  test("human output names the statuses", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", { mcpServers: { local: testServerEntry() } });
    const run = await runCli(["tools", "--config", config, "--manifests", writeEchoManifests(dir)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/echo-source\s+degraded\s+1\/2 tools/);
    expect(run.stdout).toMatch(/missing gone: /);
    expect(run.stdout).toContain("mcp__echo-source__echo");
  });

  test.each([
    ["invalid JSON", "{ not json", /extensions_config\.json/],
    ["a wrong type", JSON.stringify({ mcpServers: { x: { command: 42 } } }), /mcpServers\.x\.command/],
  ])("a broken config file (%s) exits 2 naming the file and problem", async (_label, content, pattern) => {
    const dir = tempDir();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(dir, "extensions_config.json"), content);
    const run = await runCli(["tools"], {}, dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/INVALID_CONFIG/);
    expect(run.stderr).toMatch(pattern);
  });

  test("a named config file that does not exist exits 2", async () => {
    const run = await runCli(["tools", "--config", "/nonexistent/sg.json"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("/nonexistent/sg.json");
  });

  test("an unknown command exits 2 with usage", async () => {
    const run = await runCli(["frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: sciencegate");
  });
});
