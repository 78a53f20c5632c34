/**
 * `npm run demo -- --live "<question>"`: the demo's agent against the REAL providers (no fake
 * providers, no fake fetch) with a chat model chosen from the environment (see live-model.ts).
 * Approval cards go to the terminal; without one, the script's answer is given and shown.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGovernance } from "sciencegate";
import { runAgentStep } from "./agent-step.js";
import { showEvidence, showLedger } from "./audit-steps.js";
import { showCatalog } from "./broker-tour.js";
import { type ModuleImporter, selectLiveModel } from "./live-model.js";
import { step } from "./print.js";

/** Options of {@link runLiveDemo}. */
export interface LiveDemoOptions {
  /** @default process.env */
  env?: Record<string, string | undefined>;
  /** Loads the model package. @default dynamic `import()` */
  importer?: ModuleImporter;
}

/**
 * Runs the live demo.
 * @param question the user's question
 * @param options environment and importer
 * @returns the exit code: 0, or 2 without a question or a usable chat model (the reason is printed)
 */
export async function runLiveDemo(
  question: string | undefined,
  options: LiveDemoOptions = {},
): Promise<number> {
  const env = options.env ?? process.env;
  if (!question?.trim()) {
    console.error('Usage: npm run demo -- --live "<question>"');
    return 2;
  }
  const selection = await selectLiveModel(env, options.importer);
  if (!selection.ok) {
    console.error(selection.message);
    return selection.exitCode;
  }
  const { choice } = selection;
  const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-live-"));
  console.log(
    `Sciencegate demo (live): ${choice.className} ${choice.model} (${choice.envVar}); data in ${dataDir}`,
  );
  const governance = await createGovernance({ env, storage: { dataDir } });
  const threadId = `live-${randomUUID().slice(0, 8)}`;
  try {
    step(1, "Live catalog: manifests matched against the running MCP server");
    await showCatalog(governance);
    step(2, `A LangGraph agent (${choice.className}) on the real providers`);
    const answer = await runAgentStep({
      governance,
      model: selection.model,
      question,
      threadId,
      interactive: Boolean(process.stdin.isTTY),
    });
    step(3, "Evidence: every cited label must come from a governed invocation in the ledger");
    await showEvidence(governance, answer, threadId);
    step(4, "Audit ledger");
    await showLedger(governance);
  } finally {
    await governance.close();
  }
  return 0;
}
