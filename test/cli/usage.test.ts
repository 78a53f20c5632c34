import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runCli, tempDir } from "./cli-harness.js";

describe("each command's own help", () => {
  test.each([
    ["tools", "tools [--config FILE] [--manifests DIR] [--json]"],
    ["call", "call <tool> [--args JSON] [--session ID] [--json]"],
    ["audit", "audit --verify [--json]"],
    ["grants", "grants add --session ID --tool NAME"],
    ["jobs", "jobs [list|cancel ID|retry ID] [--json]"],
    ["verify", "verify --workflow FILE --run RUN_ID [--json]"],
    ["search-tools", 'search-tools "<query>" [--max-results N]'],
    ["extract", "extract <pdf> [--out DIR] [--extractor auto|pdfjs|pdftotext] [--json]"],
    ["serve", "serve gateway [--config FILE]"],
    ["console", "console [--port N] [--host H] [--writable]"],
  ])("sciencegate %s --help prints its usage (exit 0) and opens nothing", async (command, synopsis) => {
    const cwd = tempDir();
    for (const argv of [
      [command, "--help"],
      [command, "-h"],
      ["help", command],
    ]) {
      const run = await runCli(argv, {}, cwd);
      expect(run).toMatchObject({ code: 0, stderr: "" });
      expect(run.stdout.split("\n")[0]).toBe(`Usage of sciencegate ${command}:`);
      expect(run.stdout).toContain(synopsis);
      // Only its own block: no other command's line.
      expect(run.stdout).not.toContain(command === "jobs" ? "extract <pdf>" : "jobs [list|cancel ID");
    }
    expect(existsSync(join(cwd, ".sciencegate"))).toBe(false);
  });

  test("--help after other arguments still wins (sciencegate extract paper.pdf --help)", async () => {
    const run = await runCli(["extract", "paper.pdf", "--out", "x", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Needs no config and no MCP server.");
  });

  test("sciencegate call --help explains sessions", async () => {
    const run = await runCli(["call", "--help"]);
    expect(run.stdout).toContain("without --session every call is a session of its own (cli-<random>)");
  });

  test("an unknown option prints that command's usage, not the whole list (exit 2)", async () => {
    const run = await runCli(["extract", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Unknown option '--bogus'");
    expect(run.stderr).toContain("Usage of sciencegate extract:");
    expect(run.stderr).not.toContain("serve gateway");
  });

  test("sciencegate --help lists every command and says --help works after one", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    for (const line of [
      "tools [--config",
      "call <tool>",
      "extract <pdf>",
      "serve sources",
      "console [--port",
    ]) {
      expect(run.stdout).toContain(line);
    }
    expect(run.stdout).toContain("after a command (sciencegate call --help), that command's help");
  });
});
