/**
 * The offline demo's data, for the research-object tests: `examples/demo.ts` run as `npm run demo` runs
 * it (its own Node process, stdin not a TTY, no chat-model variables), keeping its data directory and
 * its final answer, and a runtime over that data directory to export from.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { runNodeScript } from "../examples/run-node-script.js";

/** The demo agent's thread, which is also its governance session. */
export const DEMO_SESSION = "agent-demo";

const PROVIDER_VARS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_BASE_URL", "SCIENCEGATE_DEMO_MODEL"];

/**
 * Runs the offline demo into `scratch/data`.
 * @param scratch a folder for the data directory and the answer
 * @returns the data directory and the final answer
 */
export async function runOfflineDemo(scratch: string): Promise<{ dataDir: string; answer: string }> {
  const dataDir = join(scratch, "data");
  const answerFile = join(scratch, "answer.md");
  const env = { ...process.env };
  for (const name of PROVIDER_VARS) delete env[name];
  const run = await runNodeScript(["examples/demo.ts", "--data-dir", dataDir, "--answer-file", answerFile], {
    env,
    timeoutMs: 120_000,
  });
  if (run.code !== 0) throw new Error(`The demo failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
  return { dataDir, answer: readFileSync(answerFile, "utf8") };
}

/**
 * A runtime over the demo's data directory (its catalog lists the bundled servers' tools; no call is made).
 * @param dataDir the demo's data directory
 * @returns the runtime; close it
 */
export function openDemoData(dataDir: string): Promise<Governance> {
  return createGovernance({ storage: { dataDir }, onWarning: () => undefined });
}
