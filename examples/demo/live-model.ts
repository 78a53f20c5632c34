/**
 * Which LangChain chat model `npm run demo -- --live` uses, chosen from the environment:
 * `OPENAI_API_KEY` → ChatOpenAI, else `ANTHROPIC_API_KEY` → ChatAnthropic, else `OLLAMA_BASE_URL` →
 * ChatOllama; `SCIENCEGATE_DEMO_MODEL` overrides the model name. The provider package is imported
 * only once chosen, so none of them is a dependency; a missing one is reported with its install command.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/** Loads a module by specifier (`(s) => import(s)` outside tests). */
export type ModuleImporter = (specifier: string) => Promise<Record<string, unknown>>;

/** The chosen provider: what to import, what to construct and with which fields. */
export interface LiveModelChoice {
  /** The variable that decided it. */
  envVar: "OPENAI_API_KEY" | "ANTHROPIC_API_KEY" | "OLLAMA_BASE_URL";
  packageName: "@langchain/openai" | "@langchain/anthropic" | "@langchain/ollama";
  className: "ChatOpenAI" | "ChatAnthropic" | "ChatOllama";
  model: string;
  /** Constructor fields of the class. */
  fields: Record<string, unknown>;
}

/** A usable model, or why not (the demo exits with `exitCode`). */
export type LiveModelSelection =
  | { ok: true; choice: LiveModelChoice; model: BaseChatModel }
  | { ok: false; exitCode: 2; message: string };

/** Default model names, used unless `SCIENCEGATE_DEMO_MODEL` is set. */
export const DEFAULT_LIVE_MODELS = {
  OPENAI_API_KEY: "gpt-4.1-mini",
  ANTHROPIC_API_KEY: "claude-sonnet-4-5",
  OLLAMA_BASE_URL: "llama3.1",
} as const;

type Env = Record<string, string | undefined>;

/**
 * Picks the provider from the environment, without importing anything.
 * @param env the environment (empty values count as unset)
 * @returns the choice, or `undefined` when no provider is configured
 */
export function chooseLiveModel(env: Env): LiveModelChoice | undefined {
  const set = (name: string) => (env[name]?.trim() ? env[name]?.trim() : undefined);
  const override = set("SCIENCEGATE_DEMO_MODEL");
  const openai = set("OPENAI_API_KEY");
  if (openai) {
    const model = override ?? DEFAULT_LIVE_MODELS.OPENAI_API_KEY;
    return {
      envVar: "OPENAI_API_KEY",
      packageName: "@langchain/openai",
      className: "ChatOpenAI",
      model,
      fields: { model, apiKey: openai, temperature: 0 },
    };
  }
  const anthropic = set("ANTHROPIC_API_KEY");
  if (anthropic) {
    const model = override ?? DEFAULT_LIVE_MODELS.ANTHROPIC_API_KEY;
    return {
      envVar: "ANTHROPIC_API_KEY",
      packageName: "@langchain/anthropic",
      className: "ChatAnthropic",
      model,
      fields: { model, apiKey: anthropic, temperature: 0 },
    };
  }
  const ollama = set("OLLAMA_BASE_URL");
  if (ollama) {
    const model = override ?? DEFAULT_LIVE_MODELS.OLLAMA_BASE_URL;
    return {
      envVar: "OLLAMA_BASE_URL",
      packageName: "@langchain/ollama",
      className: "ChatOllama",
      model,
      fields: { model, baseUrl: ollama, temperature: 0 },
    };
  }
  return undefined;
}

/** What the demo prints when no provider is configured. */
export const NO_LIVE_MODEL_MESSAGE = [
  "The live demo needs a chat model that can call tools. Set one of:",
  `  OPENAI_API_KEY=sk-...                    ChatOpenAI (${DEFAULT_LIVE_MODELS.OPENAI_API_KEY}); npm install @langchain/openai`,
  `  ANTHROPIC_API_KEY=sk-ant-...             ChatAnthropic (${DEFAULT_LIVE_MODELS.ANTHROPIC_API_KEY}); npm install @langchain/anthropic`,
  `  OLLAMA_BASE_URL=http://127.0.0.1:11434   ChatOllama (${DEFAULT_LIVE_MODELS.OLLAMA_BASE_URL}); npm install @langchain/ollama`,
  "SCIENCEGATE_DEMO_MODEL=<name> overrides the model. When several are set, the first in this list wins.",
].join("\n");

/**
 * Chooses the provider and constructs its chat model.
 * @param env the environment
 * @param importer loads the provider package @default dynamic `import()`
 * @returns the model, or exit code 2 with guidance (no provider configured, package not installed,
 *   or the package lacks the class)
 * @throws whatever the import throws when the package is installed but broken
 */
export async function selectLiveModel(
  env: Env,
  importer: ModuleImporter = (specifier) => import(specifier),
): Promise<LiveModelSelection> {
  const choice = chooseLiveModel(env);
  if (!choice) return { ok: false, exitCode: 2, message: NO_LIVE_MODEL_MESSAGE };
  let module: Record<string, unknown>;
  try {
    module = await importer(choice.packageName);
  } catch (error) {
    if (!isMissingPackage(error, choice.packageName)) throw error;
    return {
      ok: false,
      exitCode: 2,
      message:
        `${choice.envVar} is set, so the live demo uses ${choice.className} from ${choice.packageName}, ` +
        `which is not installed. Install it with:\n  npm install ${choice.packageName}`,
    };
  }
  const ModelClass = module[choice.className];
  if (typeof ModelClass !== "function") {
    return {
      ok: false,
      exitCode: 2,
      message: `${choice.packageName} does not export ${choice.className}; install a current version:\n  npm install ${choice.packageName}@latest`,
    };
  }
  const model = new (ModelClass as new (fields: Record<string, unknown>) => BaseChatModel)(choice.fields);
  return { ok: true, choice, model };
}

/** Node's "cannot find package" error for this package (not for one of its own dependencies). */
function isMissingPackage(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const missing = code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
  return missing && typeof message === "string" && message.includes(`'${packageName}'`);
}
