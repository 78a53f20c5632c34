/** Scanning a `[tools.local]` folder: every TypeScript/JavaScript and Python file's public functions. */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { GovernanceError } from "../../core/index.js";
import type { LocalTool } from "./local-tool.js";
import { loadPythonTools, type PythonToolsOptions } from "./python-tools.js";
import { loadTypeScriptTools, TYPESCRIPT_TOOL_FILE } from "./typescript-tools.js";

/**
 * Loads every tool of a folder (not recursive; files starting with `_` or `.` are skipped).
 * @param dir absolute folder path
 * @param options Python interpreter and environment
 * @returns the tools, by file name order
 * @throws GovernanceError `INVALID_CONFIG` when the folder cannot be read; `DUPLICATE_ID` when two files
 *   define the same function name (put twins in separate providers)
 */
export async function loadLocalTools(dir: string, options: PythonToolsOptions = {}): Promise<LocalTool[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new GovernanceError("INVALID_CONFIG", `The local tools folder ${dir} cannot be read (${code}).`);
  }
  const tools: LocalTool[] = [];
  for (const name of names) {
    if (name.startsWith("_") || name.startsWith(".")) continue;
    const file = join(dir, name);
    if (name.endsWith(".py")) tools.push(...(await loadPythonTools(file, options)));
    else if (TYPESCRIPT_TOOL_FILE.test(name)) tools.push(...(await loadTypeScriptTools(file)));
  }
  const seen = new Map<string, string>();
  for (const tool of tools) {
    const other = seen.get(tool.name);
    if (other !== undefined) {
      throw new GovernanceError(
        "DUPLICATE_ID",
        `The local tool '${tool.name}' is defined in both ${other} and ${tool.file}; rename one or move it to another [tools.<provider>] folder.`,
      );
    }
    seen.set(tool.name, tool.file);
  }
  return tools;
}
