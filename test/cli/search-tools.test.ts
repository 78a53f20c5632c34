import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { runCli, tempDir, testServerEntry, writeJson } from "./cli-harness.js";

interface Report {
  results: { name: string; score: number; matchedIn: string[] }[];
}

describe("sciencegate search-tools", () => {
  test("offline over the built-in manifests: a bare tool id finds its tool first; --json has the documented shape", async () => {
    const run = await runCli(["search-tools", "fetch_abstracts", "--json"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const report = JSON.parse(run.stdout) as Report;
    expect(Object.keys(report)).toEqual(["results"]);
    expect(report.results[0]).toEqual({
      name: "mcp__pubmed__fetch_abstracts",
      score: expect.any(Number),
      matchedIn: expect.arrayContaining(["name-suffix"]),
    });
    expect(report.results).toHaveLength(5);
    for (const hit of report.results) expect(Object.keys(hit).sort()).toEqual(["matchedIn", "name", "score"]);
  });

  test("ranks natural requests like tool_search and honours --max-results", async () => {
    const run = await runCli([
      "search-tools",
      "crystal structures of the spike protein",
      "--max-results",
      "2",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    expect(report.results.map((r) => r.name)).toHaveLength(2);
    expect(report.results[0]?.name).toBe("mcp__pdb__search_structures");
    expect(report.results[0]?.score).toBeGreaterThanOrEqual(report.results[1]?.score ?? 0);
  });

  test("human output lists rank, name, why it matched and the one-line summary", async () => {
    const run = await runCli(["search-tools", "select:uniprot.lookup"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^1 of \d+ tools \(built-in manifests\) match "select:uniprot\.lookup"\n/);
    expect(run.stdout).toMatch(/ 1\. mcp__uniprot__lookup {2}score 1 \(select\)\n {5}\S/);
  });

  test("--manifests adds a folder's tools without starting anything", async () => {
    const dir = tempDir();
    const manifests = join(dir, "manifests");
    mkdirSync(manifests);
    writeJson(
      manifests,
      "lab.json",
      makeSource({
        id: "lab-notes",
        transport: { mcpServerId: "nowhere" },
        tools: [makeTool({ id: "find_notebook", description: "Find electronic lab notebook entries." })],
      }),
    );
    const run = await runCli(["search-tools", "lab notebook", "--manifests", manifests, "--json"]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Report).results[0]?.name).toBe("mcp__lab-notes__find_notebook");
  });

  test("with a config, tools of servers that answer are added; a dead server is a warning", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: {
        local: testServerEntry(),
        broken: testServerEntry({ TEST_SERVER_FAIL_AT_START: "boot failed" }),
      },
    });
    const run = await runCli(["search-tools", "whoami", "--config", config, "--json"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("warning: server 'broken' unavailable");
    const report = JSON.parse(run.stdout) as Report;
    // The test server has no manifest: its tools come from a derived manifest of the live tool list.
    expect(report.results[0]?.name).toBe("mcp__local__whoami");
    const builtins = await runCli(["search-tools", "fetch_abstracts", "--config", config, "--json"]);
    expect((JSON.parse(builtins.stdout) as Report).results[0]?.name).toBe("mcp__pubmed__fetch_abstracts");
  });

  test.each([
    [["search-tools"]],
    [["search-tools", "   "]],
    [["search-tools", "genes", "--max-results", "0"]],
    [["search-tools", "genes", "--max-results", "21"]],
    [["search-tools", "genes", "--max-results", "many"]],
  ])("usage error %j exits 2", async (argv) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("sciencegate search-tools");
  });

  test("an invalid config file exits 2 naming the file", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "bad.json", { mcpServers: { x: { command: 42 } } });
    const run = await runCli(["search-tools", "genes", "--config", config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/INVALID_CONFIG.*bad\.json/s);
  });
});
