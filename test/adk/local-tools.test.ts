import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { loadLocalTools } from "../../src/adk/local-tools/load-local-tools.js";
import type { LocalTool } from "../../src/adk/local-tools/local-tool.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

const languages = [
  ["TypeScript", "ts-tools"],
  ["Python", "py-tools"],
] as const;

describe.each(languages)("%s local tools", (_language, folder) => {
  let tools: Promise<LocalTool[]> | undefined;
  const load = () => {
    tools ??= loadLocalTools(join(FIXTURES, folder));
    return tools;
  };
  const find = async (name: string) => {
    const tool = (await load()).find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool;
  };

  test.each([
    ["takes_number", { type: "number" }, true],
    ["takes_string", { type: "string" }, true],
    ["takes_boolean", { type: "boolean" }, true],
    ["takes_array", { type: "array", items: { type: "number" } }, true],
    ["takes_default", { type: expect.stringMatching(/^(number|integer)$/), default: 3 }, false],
    [
      "takes_object",
      { type: "object", properties: { mass: { type: "number" }, label: { type: "string" } } },
      true,
    ],
    ["takes_union", { type: "string", enum: ["linear", "log"] }, true],
  ])("%s: parameter schema and required list", async (name, schema, required) => {
    const tool = await find(name);
    expect(tool.inputSchema.properties.value).toMatchObject(schema);
    expect(tool.inputSchema.required ?? []).toEqual(required ? ["value"] : []);
    expect(tool.description).toMatch(/^Takes /);
  });

  test("only public functions become tools (underscore and non-function exports excluded)", async () => {
    const names = (await load()).map((t) => t.name).sort();
    expect(names).toEqual([
      "explode",
      "takes_array",
      "takes_boolean",
      "takes_default",
      "takes_number",
      "takes_object",
      "takes_string",
      "takes_union",
    ]);
  });

  test("a tool runs with named arguments, defaults apply, and a raising tool rejects with its message", async () => {
    expect(await (await find("takes_number")).run({ value: 21 })).toBe(42);
    expect(await (await find("takes_default")).run({})).toBe(3);
    await expect((await find("explode")).run({ reason: "bad input" })).rejects.toThrow(
      /Error: refused: bad input|refused: bad input/,
    );
  });
});

test("the object parameter's optional TypeScript field is not required", async () => {
  const tools = await loadLocalTools(join(FIXTURES, "ts-tools"));
  const object = tools.find((t) => t.name === "takes_object");
  expect(object?.inputSchema.properties.value).toMatchObject({ required: ["mass"] });
});

describe("a folder whose files need different things", () => {
  /** A folder with one TypeScript and one Python tool. */
  async function mixedFolder(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "sciencegate-mixed-tools-"));
    await writeFile(
      join(dir, "fit.ts"),
      "/** Doubles x. */\nexport function double(x: number): number {\n  return x * 2;\n}\n",
    );
    await writeFile(
      join(dir, "fit_py.py"),
      'def triple(x: float) -> float:\n    """Triples x."""\n    return x * 3\n',
    );
    return dir;
  }

  test("no Python interpreter: the .py file is skipped naming it, the TypeScript tool loads and runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sciencegate-mixed-"));
    const folder = await mixedFolder();
    const skipped: string[] = [];
    const tools = await loadLocalTools(folder, {
      env: { PATH: process.env.PATH, SCIENCEGATE_PYTHON: join(dir, "no-such-python") },
      onSkippedFile: (line) => skipped.push(line),
    });
    expect(tools.map((t) => t.name)).toEqual(["double"]);
    expect(await tools[0]?.run({ x: 4 })).toBe(8);
    expect(skipped).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${join(folder, "fit_py.py")} is skipped: its tools need ${join(dir, "no-such-python")}, which is not installed \\(spawn .*ENOENT; install Python 3 or set SCIENCEGATE_PYTHON\\); the folder's other tools are loaded\\.$`,
        ),
      ),
    ]);
  });

  test("everything installed: both tools load and nothing is skipped", async () => {
    const skipped: string[] = [];
    const tools = await loadLocalTools(await mixedFolder(), { onSkippedFile: (line) => skipped.push(line) });
    expect(tools.map((t) => t.name).sort()).toEqual(["double", "triple"]);
    expect(await tools.find((t) => t.name === "triple")?.run({ x: 2 })).toBe(6);
    expect(skipped).toEqual([]);
  });

  test("a file that is broken (not a missing requirement) still fails the folder, naming the file", async () => {
    const folder = await mixedFolder();
    await writeFile(join(folder, "broken.py"), "def oops(:\n");
    await expect(loadLocalTools(folder, { onSkippedFile: () => undefined })).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining(join(folder, "broken.py")),
    });
  });
});
