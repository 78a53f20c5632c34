import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect, test } from "vitest";
import { createScienceGovernance as createGovernance } from "../../src/adk/index.js";
import { runCli } from "./cli-harness.js";

const EXAMPLE = resolve(import.meta.dirname, "../../examples/science-adk");

test("the example project: tools lists both providers, a run passes the gate, an empty run fails it, and a node is judged by its own calls only", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-verify-"));
  cpSync(EXAMPLE, dir, { recursive: true });
  const env = { SCIENCEGATE_HOME: join(dir, ".sciencegate") };

  const tools = await runCli(["tools", "--json"], env, dir);
  expect(tools.code).toBe(0);
  const report = JSON.parse(tools.stdout);
  expect(
    report.tools.map((t: { qualifiedName: string; providerKind: string }) => [
      t.qualifiedName,
      t.providerKind,
    ]),
  ).toEqual([
    ["local.power_law_fit", "local"],
    ["pylocal.power_law_fit", "local"],
  ]);

  const governance = await createGovernance({ cwd: dir, env: { ...env, PATH: process.env.PATH } });
  try {
    const x = [0.39, 0.72, 1, 1.52, 5.2];
    const y = x.map((a) => a ** 1.5);
    const ts = await governance.callTool(
      "local.power_law_fit",
      { x, y },
      { runId: "run-1", nodeId: "analyze" },
    );
    const py = await governance.callTool(
      "pylocal.power_law_fit",
      { x, y },
      { runId: "run-1", nodeId: "cross_check" },
    );
    expect((ts.value as { exponent: number }).exponent).toBeCloseTo(1.5, 9);
    expect((py.value as { exponent: number }).exponent).toBeCloseTo(1.5, 9);
    await expect(
      governance.callTool(
        "local.power_law_fit",
        { x: [1, 2], y: [1] },
        { runId: "run-2", nodeId: "analyze" },
      ),
    ).rejects.toThrow("RangeError: x and y differ in length (2 vs 1)");
    // run-3: both tools called, but both by 'analyze'; 'cross_check' made no call of its own.
    await governance.callTool("local.power_law_fit", { x, y }, { runId: "run-3", nodeId: "analyze" });
    await governance.callTool("pylocal.power_law_fit", { x, y }, { runId: "run-3", nodeId: "analyze" });
  } finally {
    await governance.close();
  }

  const pass = await runCli(["verify", "--workflow", "workflow.json", "--run", "run-1"], env, dir);
  expect(pass).toMatchObject({ code: 0 });
  expect(pass.stdout).toContain("tool_use_verified: passed (score 1.00");

  const fail = await runCli(["verify", "--workflow", "workflow.json", "--run", "run-2", "--json"], env, dir);
  expect(fail.code).toBe(1);
  expect(JSON.parse(fail.stdout)).toMatchObject({
    passed: false,
    score: 0,
    failures: [{ nodeId: "analyze" }, { nodeId: "cross_check" }],
  });

  const other = await runCli(["verify", "--workflow", "workflow.json", "--run", "run-3", "--json"], env, dir);
  expect(other.code).toBe(1);
  expect(JSON.parse(other.stdout).failures).toEqual([
    {
      nodeId: "cross_check",
      tools: ["pylocal.power_law_fit"],
      message: expect.stringContaining("node 'cross_check' declared tools [pylocal.power_law_fit]"),
    },
  ]);

  // Declared names resolve like callTool's: power_law_fit exists in both providers.
  writeFileSync(join(dir, "bare.json"), JSON.stringify({ nodes: [{ id: "fit", tools: ["power_law_fit"] }] }));
  const bare = await runCli(["verify", "--workflow", "bare.json", "--run", "run-1"], env, dir);
  expect(bare.code).toBe(1);
  expect(bare.stderr).toContain(
    "INVALID_INPUT: Node 'fit': Tool name 'power_law_fit' is ambiguous; use one of the qualified names: local.power_law_fit, pylocal.power_law_fit.",
  );

  const usage = await runCli(["verify", "--workflow", "workflow.json"], env, dir);
  expect(usage.code).toBe(2);
}, 60_000);

test("an unset token_env variable stops every command with the exact ToolError line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-verify-"));
  writeFileSync(
    join(dir, "science.toml"),
    `[tools.remote_compute]\nurl = "http://127.0.0.1:9/"\ntoken_env = "COMPUTE_API_TOKEN"\n`,
  );
  const run = await runCli(["tools", "--config", "science.toml"], {}, dir);
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    "ToolError: Tool provider 'remote_compute' needs COMPUTE_API_TOKEN environment variable, which is not set.\n",
  );
});

test("an unknown [run] setting stops every command with INVALID_CONFIG naming file, field and the known keys", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-verify-"));
  writeFileSync(join(dir, "science.toml"), "[run]\nmax_optimise_iterations = 5\n");
  const run = await runCli(["tools"], {}, dir);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain(
    `INVALID_CONFIG: ${join(dir, "science.toml")} is invalid: run: Unrecognized key: "max_optimise_iterations" (known: node_timeout_s, max_optimize_iterations)`,
  );
});
