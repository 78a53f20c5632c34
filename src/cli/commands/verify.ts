import { resolve } from "node:path";
import { loadWorkflowDeclarations, toolUseVerified } from "../../adk/index.js";
import type { CliIo, ExitCode } from "../io.js";
import type { CliRuntime } from "../runtime.js";
import { terminalLine } from "../terminal-text.js";

/** Options of {@link verifyCommand}. */
export interface VerifyCommandOptions {
  /** Path of `workflow.json` (relative to the working directory). */
  workflow: string;
  /** The run id the calls were recorded under. */
  run: string;
  json: boolean;
}

/**
 * `sciencegate verify --workflow workflow.json --run RUN_ID`: the `tool_use_verified` gate after a run.
 * @param runtime an open CLI runtime (its ledger holds the run)
 * @param io output streams
 * @param options workflow file, run id, output format
 * @returns 0 when every node that declared tools made a successful call of one itself, 1 otherwise
 * @throws GovernanceError `INVALID_CONFIG` when the workflow file is missing or malformed; `INVALID_INPUT`
 *   when a declared bare tool name is ambiguous
 */
export async function verifyCommand(
  runtime: CliRuntime,
  io: CliIo,
  options: VerifyCommandOptions,
): Promise<ExitCode> {
  const declarations = await loadWorkflowDeclarations(resolve(io.cwd, options.workflow));
  const verdict = await toolUseVerified({ governance: runtime, runId: options.run, declarations });
  if (options.json) {
    io.stdout(`${JSON.stringify({ gate: "tool_use_verified", run: options.run, ...verdict }, null, 2)}\n`);
  } else {
    const checked = declarations.filter((d) => (d.tools ?? []).length > 0).length;
    io.stdout(
      terminalLine`tool_use_verified: ${verdict.passed ? "passed" : "FAILED"} (score ${verdict.score.toFixed(2)}; ${checked} node(s) with declared tools, run ${options.run})\n`,
    );
    for (const failure of verdict.failures) io.stdout(terminalLine`  ${failure.message}\n`);
  }
  return verdict.passed ? 0 : 1;
}
