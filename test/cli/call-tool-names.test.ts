import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { runCli, tempDir } from "./cli-harness.js";

const FIXTURES = resolve(import.meta.dirname, "../adk/fixtures");

/** A science.toml project: `scale` exists once (extra), `takes_number` twice (ts and twin). */
function project(): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, "science.toml"),
    [
      ["extra", "extra-tools"],
      ["ts", "ts-tools"],
      ["twin", "ts-tools"],
    ]
      .map(([id, folder]) => `[tools.${id}]\npath = ${JSON.stringify(join(FIXTURES, folder as string))}\n`)
      .join("\n"),
  );
  return dir;
}

function value(stdout: string): unknown {
  return JSON.parse(stdout).result.data.structuredContent.result;
}

describe("sciencegate call resolves tool names like callTool", () => {
  test("a bare name that only one provider has works, also with --approve; the model-visible name too", async () => {
    const dir = project();
    const bare = await runCli(["call", "scale", "--args", '{"value":4}', "--json"], {}, dir);
    expect(bare.stderr).toBe("");
    expect(bare.code).toBe(0);
    expect(value(bare.stdout)).toBe(8);

    const approved = await runCli(
      ["call", "scale", "--args", '{"value":5}', "--approve", "once", "--json"],
      {},
      dir,
    );
    expect(approved.code).toBe(0);
    expect(value(approved.stdout)).toBe(10);

    const visible = await runCli(["call", "mcp__extra__scale", "--args", '{"value":1}', "--json"], {}, dir);
    expect(visible.code).toBe(0);
    expect(value(visible.stdout)).toBe(2);
  }, 60_000);

  test("an ambiguous bare name is INVALID_INPUT listing the qualified candidates; nothing runs", async () => {
    const dir = project();
    const run = await runCli(["call", "takes_number", "--args", '{"value":1}', "--json"], {}, dir);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: "INVALID_INPUT",
      data: { candidates: ["ts.takes_number", "twin.takes_number"] },
    });
    expect(run.stderr).toContain("use one of the qualified names: ts.takes_number, twin.takes_number");
    const audit = JSON.parse((await runCli(["audit", "--json"], {}, dir)).stdout);
    expect(audit.summary.calls).toBe(0);
  }, 60_000);

  test("search-tools finds a science.toml project's tools by bare name (select: lists every candidate)", async () => {
    const dir = project();
    const names = async (query: string) => {
      const run = await runCli(["search-tools", query, "--json"], {}, dir);
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout).results.map((r: { name: string }) => r.name);
    };
    expect(await names("select:scale")).toEqual(["mcp__extra__scale"]);
    expect(await names("select:takes_number,extra.scale")).toEqual([
      "mcp__ts__takes_number",
      "mcp__twin__takes_number",
      "mcp__extra__scale",
    ]);
  }, 60_000);
});
