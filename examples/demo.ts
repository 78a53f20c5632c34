/**
 * `npm run demo`: the governed path end to end, offline. The bundled sources server runs as a real
 * stdio MCP child process against loopback fake providers; every call goes through the broker, and a
 * LangGraph agent with a scripted model searches, looks a paper up, downloads it (the PDF comes from
 * an offline fetch seam that serves only arxiv.org) and reads it before answering with citations.
 * `npm run demo -- --live "<question>"` runs the same agent on the real providers (demo/live-demo.ts).
 * `--data-dir DIR` keeps the ledger, grants, jobs and papers in DIR (else a new temp folder), and
 * `--answer-file FILE` writes the agent's final answer there: the console's browser test runs the demo so.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGovernance } from "sciencegate";
import { ScriptedChatModel, startReferenceWikiServer } from "sciencegate/testing";
import { runAgentStep } from "./demo/agent-step.js";
import { showEvidence, showLedger } from "./demo/audit-steps.js";
import { runBrokerTour, showCatalog } from "./demo/broker-tour.js";
import { runLiveDemo } from "./demo/live-demo.js";
import { createOfflinePaperFetch, demoPaperPdf, offlineLookup } from "./demo/offline-paper-fetch.js";
import { startOfflineProviders } from "./demo/offline-providers.js";
import { DEMO_QUESTION, paperAgentScript } from "./demo/paper-agent-script.js";
import { step } from "./demo/print.js";

const args = process.argv.slice(2);
if (args.includes("--live")) {
  process.exitCode = await runLiveDemo(args[args.indexOf("--live") + 1]);
} else {
  process.exitCode = await runOfflineDemo();
}

/** The offline demo; returns 1 when the final answer's citations do not check out. */
async function runOfflineDemo(): Promise<number> {
  const started = performance.now();
  const dataDir = optionValue("--data-dir") ?? mkdtempSync(join(tmpdir(), "sciencegate-demo-"));
  mkdirSync(dataDir, { recursive: true });
  const providers = await startOfflineProviders();
  // A loopback LLM Wiki over the test pages, for the bundled llm-wiki bridge.
  const wiki = await startReferenceWikiServer({
    pagesDir: join(import.meta.dirname, "../test/fixtures/wiki"),
  });
  // artifact_download's HTTP seam: the candidate keeps its real https://arxiv.org URL (and so the real
  // allowlist check); this fetch serves a generated PDF for that host, in chunks, and nothing else.
  const paperFetch = createOfflinePaperFetch({ host: "arxiv.org", body: demoPaperPdf(), chunks: 4 });
  console.log(`Sciencegate demo (offline). Fake providers on ${providers.server.url}; data in ${dataDir}`);
  const governance = await createGovernance({
    env: { ...process.env, ...providers.env, SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin },
    storage: { dataDir },
    downloads: { lookup: offlineLookup, fetch: paperFetch },
    permissions: {
      // The app's own rule for the agent step: Europe PMC searches need a human (a stand-in for any policy).
      // By default a read-only search of a public source asks nobody; the card says it is this rule.
      policy: { isDangerous: (call) => (call.sourceId === "europe-pmc" ? true : undefined) },
    },
  });
  try {
    step(1, "Live catalog: manifests matched against the running MCP server");
    await showCatalog(governance);
    await runBrokerTour(governance);

    step(
      9,
      "A LangGraph agent (scripted model): tool_search, a parallel pair, approval, a paper downloaded and read",
    );
    const threadId = "agent-demo";
    const answer = await runAgentStep({
      governance,
      model: new ScriptedChatModel(paperAgentScript, "demo"),
      question: DEMO_QUESTION,
      threadId,
      interactive: Boolean(process.stdin.isTTY),
    });

    const answerFile = optionValue("--answer-file");
    if (answerFile) writeFileSync(answerFile, answer);

    step(10, "Evidence: every cited label must come from a governed invocation in the ledger");
    const backed = await showEvidence(governance, answer, threadId);

    step(11, "Audit ledger");
    await showLedger(governance);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `\nDone in ${seconds} s. Provider requests served: ${providers.server.requests.length}; paper requests: ${paperFetch.requests.length}.`,
    );
    console.log(`Look at it in the browser: SCIENCEGATE_HOME=${dataDir} npm run sciencegate -- console`);
    return backed ? 0 : 1;
  } finally {
    await governance.close();
    await providers.server.close();
    await wiki.close();
  }
}

/** The value after a `--flag` of the command line, if given. */
function optionValue(flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at >= 0 ? args[at + 1] : undefined;
}
