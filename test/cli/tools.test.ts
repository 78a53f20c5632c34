import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  EVERYTHING_SERVER,
  REPO_ROOT,
  runCli,
  TSX_LOADER,
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
    // Once (the runtime's warning), naming the server and the reason; the disabled server is not one.
    expect(run.stderr.match(/^warning: .*$/gm)).toEqual([
      expect.stringMatching(/^warning: server 'broken' unavailable: .*boot failed: missing database/),
    ]);
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

/** Runs the real `sciencegate` process (source through tsx) with a deadline; `code` is null when it was killed. */
function runCliProcess(argv: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  const main = join(REPO_ROOT, "src/cli/main.ts");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", TSX_LOADER, main, ...argv],
      {
        cwd,
        timeout: 30_000,
        killSignal: "SIGKILL",
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SCIENCEGATE_HOME: join(cwd, ".sciencegate") },
      },
      (error, _stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stderr });
      },
    );
  });
}

describe("sciencegate tools: server ids named after Object.prototype members", () => {
  test.each([
    ["toString alone", '"toString": @', ["toString"]],
    ["valueOf beside a good server", '"good": @, "valueOf": @', ["valueOf"]],
    ["__proto__ and constructor", '"__proto__": @, "constructor": @', ["__proto__", "constructor"]],
  ])(
    "%s: the process exits 2 with INVALID_CONFIG naming each id",
    async (_name, servers, ids) => {
      const dir = tempDir();
      const config = join(dir, "extensions_config.json");
      const server = JSON.stringify(testServerEntry());
      // Written by hand: JSON.stringify of an object literal cannot hold an own "__proto__" key.
      writeFileSync(config, `{"mcpServers": {${servers.replaceAll("@", server)}}}`);
      const run = await runCliProcess(["tools", "--config", config], dir);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(config);
      for (const id of ids) {
        expect(run.stderr).toMatch(new RegExp(`mcpServers.${id} is a reserved name .*Rename the server`));
      }
      expect(run.stderr).not.toContain("TypeError");
    },
    40_000,
  );
});
