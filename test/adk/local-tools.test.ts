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
