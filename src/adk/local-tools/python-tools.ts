/**
 * Python local tools: public top-level functions, introspected and called by the bundled stdlib-only
 * script `src/adk/python/introspect.py` over a one-request JSON protocol (stdin in, stdout out).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { GovernanceError } from "../../core/index.js";
import { type LocalTool, MissingRequirement } from "./local-tool.js";

/** The bundled introspection script (shipped next to this module's folder in `src` and `dist`). */
export const INTROSPECT_SCRIPT = fileURLToPath(new URL("../python/introspect.py", import.meta.url));

/** Options of {@link loadPythonTools}. */
export interface PythonToolsOptions {
  /** The interpreter. @default `$SCIENCEGATE_PYTHON`, else `python3` */
  python?: string;
  /** Environment of the interpreter. @default process.env */
  env?: Record<string, string | undefined>;
}

type Answer =
  | { ok: true; tools?: Omit<LocalTool, "file" | "run">[]; result?: unknown }
  | { ok: false; error: string };

/**
 * Lists the public functions of one Python file and binds each to a call through the bridge script.
 * @param file absolute path of a `.py` file
 * @param options interpreter and environment
 * @returns the file's tools; each `run` starts one interpreter and rejects with the Python error
 *   (`ValueError: ...`) when the function raises, or with a GovernanceError `UPSTREAM_UNAVAILABLE`
 *   when the interpreter cannot start or the bridge fails
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the file cannot be imported; MissingRequirement when
 *   the interpreter cannot be started
 */
export async function loadPythonTools(file: string, options: PythonToolsOptions = {}): Promise<LocalTool[]> {
  const listed = await runBridge({ op: "list", file }, options);
  if (!listed.ok) {
    throw new GovernanceError(
      "UPSTREAM_UNAVAILABLE",
      `Python tools in ${file} could not be loaded: ${listed.error}`,
    );
  }
  return (listed.tools ?? []).map((tool) => ({
    ...tool,
    file,
    run: async (args: Record<string, unknown>) => {
      const answer = await runBridge({ op: "call", file, name: tool.name, args }, options).catch(
        (error: unknown) => {
          // The interpreter went away after loading: the function could not run at all.
          if (!(error instanceof MissingRequirement)) throw error;
          throw new GovernanceError(
            "UPSTREAM_UNAVAILABLE",
            `cannot start ${error.requirement}: ${error.fix}`,
            {
              cause: error,
            },
          );
        },
      );
      if (!answer.ok) throw new Error(answer.error);
      return answer.result;
    },
  }));
}

function interpreterOf(options: PythonToolsOptions): string {
  return options.python ?? (options.env ?? process.env).SCIENCEGATE_PYTHON ?? "python3";
}

function runBridge(request: Record<string, unknown>, options: PythonToolsOptions): Promise<Answer> {
  const env = options.env ?? process.env;
  const python = interpreterOf(options);
  return new Promise((resolve, reject) => {
    const child = spawn(python, [INTROSPECT_SCRIPT], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2_000);
    });
    child.on("error", (error) =>
      reject(
        new MissingRequirement(python, `${error.message}; install Python 3 or set SCIENCEGATE_PYTHON`, error),
      ),
    );
    child.on("close", (code) => {
      try {
        resolve(JSON.parse(stdout) as Answer);
      } catch {
        const detail = stderr.trim() || `exit code ${code}`;
        reject(new GovernanceError("UPSTREAM_UNAVAILABLE", `the Python tool bridge failed: ${detail}`));
      }
    });
    child.stdin.end(JSON.stringify(request));
  });
}
