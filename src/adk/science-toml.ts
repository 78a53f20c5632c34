/** Reading `science.toml`: the project name, tool providers (local, stdio MCP, remote MCP) and the call deadline. */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse } from "smol-toml";
import { z } from "zod";
import { isReservedId, reservedIdMessage } from "../config/index.js";
import { GovernanceError } from "../core/index.js";
import { splitCommand } from "./split-command.js";
import { ToolError } from "./tool-error.js";

/** The default file name, looked up in the working directory. */
export const SCIENCE_TOML_FILE = "science.toml";

/** One `[tools.<id>]` table. `token_env` names a variable; the secret itself is never kept here. */
export type ScienceProvider =
  | { id: string; kind: "local"; path: string }
  | { id: string; kind: "stdio"; command: string; args: string[] }
  | { id: string; kind: "remote"; url: string; tokenEnv?: string };

/** A parsed `science.toml`. */
export interface ScienceProject {
  /** Absolute path of the file. */
  path: string;
  /** `[project] name`. */
  name?: string;
  /** Providers in file order. */
  providers: ScienceProvider[];
  /** `[run]`: the bounds of a run (see `ScienceRunSettings`). */
  run: ScienceRunSettings;
}

/**
 * `[run]` of `science.toml`, as the Science ADK documents it. Sciencegate applies what bounds work it
 * does itself, and hands the rest to the app.
 */
export interface ScienceRunSettings {
  /**
   * `node_timeout_s`: the deadline of each tool call the project makes through `callTool` or
   * `sciencegate call` (see `callTimeoutMs`).
   */
  nodeTimeoutS?: number;
  /**
   * `max_optimize_iterations`: how many rounds the app's optimisation loop may run. Sciencegate runs no
   * such loop (it governs tool calls, not the workflow), so only the app's own loop can honour it: read
   * it from `governance.science.run`.
   */
  maxOptimizeIterations?: number;
}

const providerSchema = z
  .object({
    path: z.string().min(1).optional(),
    command: z.string().min(1).optional(),
    url: z.url().optional(),
    token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
      .optional(),
  })
  .strict();

// Strict at every level: the keys are those of the ADK's complete `science.toml`, and a misspelt or
// unknown one (a setting nothing honours) must fail loudly, not be ignored.
const fileSchema = z
  .object({
    project: z.object({ name: z.string().optional() }).strict().optional(),
    tools: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), providerSchema).optional(),
    run: z
      .object({
        node_timeout_s: z.number().positive().optional(),
        max_optimize_iterations: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** The keys of each table, named when a file has another one. */
const KNOWN_KEYS: Record<string, string> = {
  "": "[project], [tools.<provider>], [run]",
  project: "name",
  "tools.*": "path, command, url, token_env",
  run: "node_timeout_s, max_optimize_iterations",
};

/**
 * Parses `science.toml` text.
 * @param text the TOML
 * @param path the file it came from (relative `path`s resolve against its folder)
 * @returns the project
 * @throws GovernanceError `INVALID_CONFIG` naming the file, the field and the reason
 */
export function parseScienceToml(text: string, path: string): ScienceProject {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw invalid(path, `is not valid TOML: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The TOML's own keys, before zod (which drops a `__proto__` key instead of reporting it).
  const reserved = Object.keys(tableAt(raw, "tools")).filter(isReservedId);
  if (reserved.length > 0) {
    throw invalid(path, reserved.map((id) => `[tools.${id}] ${reservedIdMessage(id)}`).join(" "));
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const at = i.path.join(".");
      const known =
        i.code === "unrecognized_keys" ? KNOWN_KEYS[at.includes(".") ? "tools.*" : at] : undefined;
      return `${at || "(top)"}: ${i.message}${known ? ` (known: ${known})` : ""}`;
    });
    throw invalid(path, `is invalid: ${issues.join("; ")}`);
  }
  const dir = dirname(path);
  const providers: ScienceProvider[] = [];
  for (const [id, table] of Object.entries(parsed.data.tools ?? {})) {
    const kinds = [table.path, table.command, table.url].filter((v) => v !== undefined).length;
    if (kinds !== 1) {
      throw invalid(
        path,
        `[tools.${id}] needs exactly one of path (local), command (stdio) or url (remote).`,
      );
    }
    if (table.token_env !== undefined && table.url === undefined) {
      throw invalid(path, `[tools.${id}] token_env only applies to a url provider.`);
    }
    if (table.path !== undefined) providers.push({ id, kind: "local", path: resolve(dir, table.path) });
    else if (table.command !== undefined) {
      const [command, ...args] = splitCommand(table.command);
      if (command === undefined) throw invalid(path, `[tools.${id}] command is empty.`);
      providers.push({ id, kind: "stdio", command, args });
    } else if (table.url !== undefined) {
      providers.push({
        id,
        kind: "remote",
        url: table.url,
        ...(table.token_env === undefined ? {} : { tokenEnv: table.token_env }),
      });
    }
  }
  const run = parsed.data.run;
  return {
    path,
    ...(parsed.data.project?.name === undefined ? {} : { name: parsed.data.project.name }),
    providers,
    run: {
      ...(run?.node_timeout_s === undefined ? {} : { nodeTimeoutS: run.node_timeout_s }),
      ...(run?.max_optimize_iterations === undefined
        ? {}
        : { maxOptimizeIterations: run.max_optimize_iterations }),
    },
  };
}

/**
 * The deadline of each tool call a project makes through `callTool` or `sciencegate call`:
 * `[run].node_timeout_s` in milliseconds. It replaces the tool's own deadline (60 s for a provider
 * without a manifest), so a local function may run as long as a node may.
 * @param project the parsed `science.toml`, if any
 * @returns milliseconds (at least 1), or `undefined` when the project sets none
 */
export function callTimeoutMs(project: ScienceProject | undefined): number | undefined {
  const seconds = project?.run.nodeTimeoutS;
  return seconds === undefined ? undefined : Math.max(1, Math.round(seconds * 1000));
}

/** The table `raw[key]` when it is one, else an empty object (own keys only: TOML tables are plain). */
function tableAt(raw: unknown, key: string): object {
  const value =
    typeof raw === "object" && raw !== null && Object.hasOwn(raw, key)
      ? (raw as Record<string, unknown>)[key]
      : undefined;
  return typeof value === "object" && value !== null ? value : {};
}

/**
 * Reads and parses a `science.toml` file.
 * @param path the file (relative to `cwd`)
 * @param cwd the working directory @default process.cwd()
 * @returns the project
 * @throws GovernanceError `INVALID_CONFIG` when the file is missing, unreadable or invalid
 */
export async function loadScienceToml(path: string, cwd = process.cwd()): Promise<ScienceProject> {
  const absolute = resolve(cwd, path);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    throw invalid(absolute, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
  return parseScienceToml(text, absolute);
}

/**
 * Checks that every `token_env` variable is set, before anything connects (fail fast).
 * @param project the parsed project
 * @param env the environment @default process.env
 * @throws ToolError `Tool provider '<id>' needs <VAR> environment variable, which is not set.`
 */
export function assertProviderTokens(
  project: ScienceProject,
  env: Record<string, string | undefined> = process.env,
): void {
  for (const provider of project.providers) {
    if (provider.kind !== "remote" || provider.tokenEnv === undefined) continue;
    const value = providerToken(provider, env);
    if (value === undefined || value === "") {
      throw new ToolError(
        provider.id,
        `Tool provider '${provider.id}' needs ${provider.tokenEnv} environment variable, which is not set.`,
      );
    }
  }
}

/**
 * The bearer token of a remote provider: the value of its `token_env` variable.
 * @param provider a provider
 * @param env the environment
 * @returns the token, or `undefined` without `token_env` or when the variable is unset (own keys only,
 *   so `token_env = "constructor"` never reads an `Object.prototype` member)
 */
export function providerToken(
  provider: ScienceProvider,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (provider.kind !== "remote" || provider.tokenEnv === undefined) return undefined;
  return Object.hasOwn(env, provider.tokenEnv) ? env[provider.tokenEnv] : undefined;
}

function invalid(path: string, reason: string): GovernanceError {
  return new GovernanceError("INVALID_CONFIG", `${path} ${reason}`, { data: { file: path, reason } });
}
