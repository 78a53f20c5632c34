/** Scanning a `[tools.local]` folder: every TypeScript/JavaScript and Python file's public functions. */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { GovernanceError } from "../../core/index.js";
import { type LocalTool, MissingRequirement } from "./local-tool.js";
import { loadPythonTools, type PythonToolsOptions } from "./python-tools.js";
import { loadTypeScriptTools, TYPESCRIPT_TOOL_FILE } from "./typescript-tools.js";

/** Options of {@link loadLocalTools}. */
export interface LocalToolsOptions extends PythonToolsOptions {
  /**
   * Receives, per file left out because what it needs is not installed (`tsx`, `typescript`, the Python
   * interpreter), one line naming the file, the missing package and how to install it.
   * @default writes `warning: <line>` to stderr
   */
  onSkippedFile?: ((line: string) => void) | undefined;
}

/**
 * Loads every tool of a folder (not recursive; files starting with `_` or `.` are skipped). A file whose
 * tools need something that is not installed is left out (and reported): the other files' tools load.
 * @param dir absolute folder path
 * @param options Python interpreter, environment, and where skipped files are reported
 * @returns the tools, by file name order
 * @throws GovernanceError `INVALID_CONFIG` when the folder cannot be read; `DUPLICATE_ID` when two files
 *   define the same function name (put twins in separate providers)
 */
export async function loadLocalTools(dir: string, options: LocalToolsOptions = {}): Promise<LocalTool[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new GovernanceError("INVALID_CONFIG", `The local tools folder ${dir} cannot be read (${code}).`);
  }
  const skipped = options.onSkippedFile ?? ((line: string) => process.stderr.write(`warning: ${line}\n`));
  const tools: LocalTool[] = [];
  for (const name of names) {
    if (name.startsWith("_") || name.startsWith(".")) continue;
    const file = join(dir, name);
    try {
      if (name.endsWith(".py")) tools.push(...(await loadPythonTools(file, options)));
      else if (TYPESCRIPT_TOOL_FILE.test(name)) tools.push(...(await loadTypeScriptTools(file)));
    } catch (error) {
      // A missing optional peer is the user's install, not the file's fault: only its tools go.
      if (!(error instanceof MissingRequirement)) throw error;
      skipped(`${file} is skipped: its tools ${error.message}; the folder's other tools are loaded.`);
    }
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
