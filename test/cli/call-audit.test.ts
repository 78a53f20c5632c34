import { describe, expect, test } from "vitest";
import { runCli, tempDir, testServerEntry, writeEchoManifests, writeJson } from "./cli-harness.js";

function setupProject(): { dir: string; args: string[] } {
  const dir = tempDir();
  const manifests = writeEchoManifests(dir);
  const config = writeJson(dir, "extensions_config.json", { mcpServers: { local: testServerEntry() } });
  return { dir, args: ["--config", config, "--manifests", manifests] };
}

describe("sciencegate call and audit", () => {
  test("a governed call is printed and lands in the ledger; errors are structured and audited too", async () => {
    const { dir, args } = setupProject();
    const ok = await runCli(
      ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":"hello"}', "--json"],
      {},
      dir,
    );
    expect(ok.code).toBe(0);
    const outcome = JSON.parse(ok.stdout);
    expect(outcome.result).toMatchObject({ sourceId: "echo-source", toolId: "echo", untrusted: true });
    expect(JSON.stringify(outcome.result.data)).toContain("hello");

    const qualified = await runCli(
      ["call", "echo-source.echo", ...args, "--args", '{"text":"again"}'],
      {},
      dir,
    );
    expect(qualified.code).toBe(0);
    expect(qualified.stdout).toMatch(/invocation [0-9a-f-]{36}/);

    const bad = await runCli(
      ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":5}', "--session", "s2"],
      {},
      dir,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("INVALID_INPUT");
    expect(bad.stderr).toContain("text: must be string");

    const audit = await runCli(["audit", "--json", "--config", args[1] as string], {}, dir);
    expect(audit.code).toBe(0);
    const report = JSON.parse(audit.stdout);
    expect(report.summary).toMatchObject({ calls: 3, ok: 2, errors: 1, byErrorCode: { INVALID_INPUT: 1 } });
    expect(report.invocations[0]).toMatchObject({ sessionId: "s2", status: "error" });

    const scoped = await runCli(["audit", "--session", "s2", "--config", args[1] as string], {}, dir);
    expect(scoped.stdout).toMatch(/^1 call\(s\): 0 ok, 1 error/);
    expect(scoped.stdout).toContain("echo-source/echo");
  });

  test("an unknown tool suggests close names and exits 1", async () => {
    const { dir, args } = setupProject();
    const run = await runCli(["call", "mcp__echo-source__ech", ...args], {}, dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("TOOL_UNAVAILABLE");
  });

  test.each([
    [["call", "x", "--args", "{oops"], "--args is not valid JSON"],
    [["call"], "name exactly one tool"],
    [["audit", "--limit", "zero"], "--limit takes a whole number"],
  ])("usage error %j exits 2", async (argv, message) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });
});
