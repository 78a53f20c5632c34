import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";
import {
  chooseLiveModel,
  DEFAULT_LIVE_MODELS,
  type ModuleImporter,
  NO_LIVE_MODEL_MESSAGE,
  selectLiveModel,
} from "../../examples/demo/live-model.js";

/** A provider package stand-in: each class records the fields it was constructed with. */
function fakePackage() {
  const made = (className: string) =>
    class {
      readonly className = className;
      constructor(readonly fields: Record<string, unknown>) {}
    };
  return {
    ChatOpenAI: made("ChatOpenAI"),
    ChatAnthropic: made("ChatAnthropic"),
    ChatOllama: made("ChatOllama"),
  };
}

/** An importer that has only the listed packages installed, and records what was asked. */
function importerWith(installed: string[]): ModuleImporter & { asked: string[] } {
  const asked: string[] = [];
  const importer = async (specifier: string) => {
    asked.push(specifier);
    if (!installed.includes(specifier)) {
      throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/examples/demo`), {
        code: "ERR_MODULE_NOT_FOUND",
      });
    }
    return fakePackage() as unknown as Record<string, unknown>;
  };
  return Object.assign(importer, { asked });
}

const ALL = ["@langchain/openai", "@langchain/anthropic", "@langchain/ollama"];

describe("selectLiveModel", () => {
  test.each([
    {
      env: { OPENAI_API_KEY: "sk-1" },
      pkg: "@langchain/openai",
      className: "ChatOpenAI",
      fields: { model: DEFAULT_LIVE_MODELS.OPENAI_API_KEY, apiKey: "sk-1", temperature: 0 },
    },
    {
      env: { ANTHROPIC_API_KEY: "sk-ant" },
      pkg: "@langchain/anthropic",
      className: "ChatAnthropic",
      fields: { model: DEFAULT_LIVE_MODELS.ANTHROPIC_API_KEY, apiKey: "sk-ant", temperature: 0 },
    },
    {
      env: { OLLAMA_BASE_URL: "http://127.0.0.1:11434" },
      pkg: "@langchain/ollama",
      className: "ChatOllama",
      fields: {
        model: DEFAULT_LIVE_MODELS.OLLAMA_BASE_URL,
        baseUrl: "http://127.0.0.1:11434",
        temperature: 0,
      },
    },
    {
      env: { OLLAMA_BASE_URL: "http://gpu:11434", SCIENCEGATE_DEMO_MODEL: "qwen3:8b" },
      pkg: "@langchain/ollama",
      className: "ChatOllama",
      fields: { model: "qwen3:8b", baseUrl: "http://gpu:11434", temperature: 0 },
    },
    {
      env: { OPENAI_API_KEY: "sk-1", SCIENCEGATE_DEMO_MODEL: "gpt-5" },
      pkg: "@langchain/openai",
      className: "ChatOpenAI",
      fields: { model: "gpt-5", apiKey: "sk-1", temperature: 0 },
    },
  ])("$env → $className from $pkg", async ({ env, pkg, className, fields }) => {
    const importer = importerWith(ALL);
    const selection = await selectLiveModel(env, importer);
    expect(importer.asked).toEqual([pkg]);
    if (!selection.ok) throw new Error(selection.message);
    expect(selection.choice).toMatchObject({ packageName: pkg, className, model: fields.model });
    expect(selection.model).toMatchObject({ className, fields });
  });

  test.each([
    {
      env: { OPENAI_API_KEY: "sk-1", ANTHROPIC_API_KEY: "sk-ant", OLLAMA_BASE_URL: "http://x" },
      winner: "ChatOpenAI",
    },
    { env: { ANTHROPIC_API_KEY: "sk-ant", OLLAMA_BASE_URL: "http://x" }, winner: "ChatAnthropic" },
    { env: { OPENAI_API_KEY: "  ", ANTHROPIC_API_KEY: "sk-ant" }, winner: "ChatAnthropic" },
    { env: { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", OLLAMA_BASE_URL: "http://x" }, winner: "ChatOllama" },
  ])(
    "precedence: OpenAI, then Anthropic, then Ollama; blank values are unset ($winner)",
    ({ env, winner }) => {
      expect(chooseLiveModel(env)?.className).toBe(winner);
    },
  );

  test.each([
    { env: { OPENAI_API_KEY: "sk-1" }, pkg: "@langchain/openai", variable: "OPENAI_API_KEY" },
    { env: { ANTHROPIC_API_KEY: "sk-ant" }, pkg: "@langchain/anthropic", variable: "ANTHROPIC_API_KEY" },
    { env: { OLLAMA_BASE_URL: "http://x" }, pkg: "@langchain/ollama", variable: "OLLAMA_BASE_URL" },
  ])("a missing $pkg exits 2 naming the exact install command", async ({ env, pkg, variable }) => {
    const selection = await selectLiveModel(env, importerWith([]));
    expect(selection.ok).toBe(false);
    if (selection.ok) return;
    expect(selection.exitCode).toBe(2);
    expect(selection.message).toContain(`npm install ${pkg}`);
    expect(selection.message).toContain(variable);
  });

  test("without any provider it exits 2 explaining the three options, importing nothing", async () => {
    const importer = importerWith(ALL);
    const selection = await selectLiveModel({ SCIENCEGATE_DEMO_MODEL: "gpt-5", PATH: "/usr/bin" }, importer);
    expect(selection).toEqual({ ok: false, exitCode: 2, message: NO_LIVE_MODEL_MESSAGE });
    expect(importer.asked).toEqual([]);
    for (const hint of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_BASE_URL", "SCIENCEGATE_DEMO_MODEL"]) {
      expect(NO_LIVE_MODEL_MESSAGE).toContain(hint);
    }
  });

  test("a package without the class exits 2 asking for a current version", async () => {
    const selection = await selectLiveModel({ OPENAI_API_KEY: "sk-1" }, async () => ({ somethingElse: 1 }));
    expect(selection).toMatchObject({ ok: false, exitCode: 2 });
    if (!selection.ok) expect(selection.message).toContain("npm install @langchain/openai@latest");
  });

  test("a broken install (a dependency of the package is missing) is not mistaken for a missing package", async () => {
    const broken: ModuleImporter = async () => {
      throw Object.assign(
        new Error("Cannot find package 'openai' imported from node_modules/@langchain/openai"),
        {
          code: "ERR_MODULE_NOT_FOUND",
        },
      );
    };
    await expect(selectLiveModel({ OPENAI_API_KEY: "sk-1" }, broken)).rejects.toThrow(
      "Cannot find package 'openai'",
    );
  });

  // None of the provider packages is a dependency; where @langchain/ollama is absent, Node's real
  // "cannot find package" error must be recognised as such.
  test.skipIf(existsSync(resolve(import.meta.dirname, "../../node_modules/@langchain/ollama")))(
    "the default importer reports a package that is not installed",
    async () => {
      const selection = await selectLiveModel({ OLLAMA_BASE_URL: "http://127.0.0.1:1" });
      expect(selection).toMatchObject({ ok: false, exitCode: 2 });
      if (!selection.ok) expect(selection.message).toContain("npm install @langchain/ollama");
    },
  );
});
