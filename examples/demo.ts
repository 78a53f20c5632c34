/**
 * `npm run demo`: the governed path end to end, offline. The bundled sources server runs as a real
 * stdio MCP child process against loopback fake providers; every call goes through the broker.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { Command, INTERRUPT, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createGovernance } from "../src/adapters/create-governance.js";
import { createGovernedAgent } from "../src/adapters/create-governed-agent.js";
import type { InvokeRequest } from "../src/governance/broker-types.js";
import { isGovernanceError } from "../src/governance/errors.js";
import type { PermissionCard } from "../src/governance/permission-types.js";
import { startReferenceWikiServer } from "../src/testing/reference-wiki-server.js";
import { autoPromote } from "../src/visibility/promotion.js";
import { modelVisibleName } from "../src/visibility/tool-names.js";
import { startOfflineProviders } from "./demo/offline-providers.js";

const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
const step = (n: number, title: string) => console.log(`\n${bold(`${n}. ${title}`)}`);

const started = performance.now();
const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-demo-"));
const providers = await startOfflineProviders();
// A loopback LLM Wiki over the test pages, for the bundled llm-wiki bridge.
const wiki = await startReferenceWikiServer({
  pagesDir: join(import.meta.dirname, "../test/fixtures/wiki"),
});
console.log(`Sciencegate demo (offline). Fake providers on ${providers.server.url}; data in ${dataDir}`);

// The built-in default config: the bundled sources server, pointed at the fake providers through env.
const governance = await createGovernance({
  env: { ...process.env, ...providers.env, SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin },
  dataDir,
  // The app's own rule for the agent step: Europe PMC searches need a human (a stand-in for any policy).
  permissionPolicy: { isDangerous: (call) => (call.sourceId === "europe-pmc" ? true : undefined) },
});
const { broker, catalog, ledger } = governance;

try {
  step(1, "Live catalog: manifests matched against the running MCP server");
  const snapshot = catalog.snapshot() ?? (await governance.refresh());
  for (const source of snapshot.sources) {
    console.log(
      `  ${source.id.padEnd(12)} ${source.status.padEnd(11)} ${source.availableTools.length} tools${source.reason ? ` (${source.reason})` : ""}`,
    );
  }
  console.log(
    `  catalog revision ${snapshot.revision.slice(0, 12)}…, ${snapshot.tools.length} callable tools, e.g.`,
  );
  for (const tool of snapshot.tools.slice(0, 4))
    console.log(`    ${modelVisibleName(tool.sourceId, tool.toolId)}`);

  const call = async (label: string, request: Omit<InvokeRequest, "session">) => {
    const name = modelVisibleName(request.sourceId, request.toolId);
    console.log(`  → ${name} ${JSON.stringify(request.input)}  (${label})`);
    try {
      const outcome = await broker.invoke({ ...request, session: "demo" });
      const r = outcome.result;
      console.log(
        `    ✓ invocation ${outcome.invocationId.slice(0, 8)} · ${outcome.cacheHit ? "cache hit" : `${outcome.attempts} attempt(s)`} · licence: ${r.license}`,
      );
      for (const record of r.records.slice(0, 3)) {
        console.log(
          `      ${record.primaryCitation.label} ${record.title.slice(0, 70)} [${record.contentScope}]`,
        );
      }
      for (const candidate of r.artifacts ?? []) {
        console.log(
          `      candidate ${candidate.candidateId}: ${candidate.kind} ${candidate.format} ← ${candidate.url}`,
        );
      }
      for (const warning of r.warnings.slice(0, 2)) console.log(`      warning: ${warning}`);
      return outcome;
    } catch (error) {
      if (!isGovernanceError(error)) throw error;
      console.log(`    ✗ ${error.code}: ${error.message}`);
      return undefined;
    }
  };

  step(2, "A governed search (validation → permission → cache → rate limit → MCP → envelope → CAS → ledger)");
  await call("search", {
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "crispr base editing", max_results: 3 },
  });

  step(3, "The same search again is served from the cache (and still authorized and audited)");
  await call("cache", {
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "crispr base editing", max_results: 3 },
  });

  step(4, "Lookups by identifier (prefixes, URLs and versions are normalized)");
  await call("lookup", { sourceId: "arxiv", toolId: "lookup", input: { ids: ["arXiv:2403.01234"] } });
  await call("lookup", { sourceId: "uniprot", toolId: "lookup", input: { accessions: ["P15056"] } });

  step(5, "Download candidates: planned, never downloaded by the query tools");
  await call("plan", { sourceId: "arxiv", toolId: "prepare_paper_download", input: { id: "2403.01234" } });
  await call("plan", {
    sourceId: "pdb",
    toolId: "prepare_structure_download",
    input: { id: "4HHB", format: "cif" },
  });

  step(6, "Bad input gets a structured error naming the field; nothing reaches the server");
  await call("invalid", { sourceId: "pubmed", toolId: "search", input: { query: "x", max_results: 1000 } });

  step(7, "Replaying a recorded tool call (same threadId:toolCallId) does not call the server again");
  const key = { threadId: "demo-thread", toolCallId: "call_1" };
  await call("first", {
    sourceId: "pubmed",
    toolId: "fetch_abstracts",
    input: { pmids: ["22000011"] },
    ...key,
  });
  const replay = await broker.invoke({
    sourceId: "pubmed",
    toolId: "fetch_abstracts",
    input: { pmids: ["22000011"] },
    session: "demo",
    ...key,
  });
  console.log(`    replayed from the ledger: ${replay.replayed}`);

  step(8, "The private LLM Wiki: off per session until the app enables it");
  const wikiSearch = { sourceId: "llm-wiki", toolId: "search", input: { query: "base editing" } };
  await call("session switch off", wikiSearch);
  governance.sessions.enableSource("demo", "llm-wiki");
  // Private data is dangerous by default; the demo's operator approves this session's wiki reads.
  governance.permissions.setApprovalMode("demo", "always_allow");
  await call("enabled: hybrid search, page citations", wikiSearch);
  await call("one page", {
    sourceId: "llm-wiki",
    toolId: "get_page",
    input: { path: "concepts/prime-editing" },
  });

  step(
    9,
    "A LangGraph agent (scripted model): deferred tools, auto-promotion, tool_search, parallel calls, an approval card",
  );
  const script = fakeModel()
    .respondWithTools([{ name: "tool_search", args: { query: "select:mcp__europe-pmc__search" } }])
    .respondWithTools([
      { name: "mcp__pubmed__search", args: { query: "crispr base editing", max_results: 2 } },
      { name: "mcp__europe-pmc__search", args: { query: "crispr base editing" } },
    ])
    .respond(
      new AIMessage({ id: "agent-final", content: "Base editing corrects HBB mutations [PMID:39000001]." }),
    );
  const agent = createGovernedAgent({
    model: script,
    governance,
    systemPrompt: "Cite every fact.",
    checkpointer: new MemorySaver(),
  });
  const thread = { configurable: { thread_id: "agent-demo" } };
  const question = "Find PubMed literature on CRISPR base editing";
  const firstTurnTools = governance.tools("agent-demo");
  console.log(
    `  first turn: ${firstTurnTools.length} deferred tools shown by name only; keywords in "${question}" auto-promote ${autoPromote(question, firstTurnTools).join(", ")}`,
  );
  let state = await agent.invoke({ messages: [new HumanMessage(question)] }, thread);
  while (isInterrupted(state)) {
    const [card] = state[INTERRUPT] as { id?: string; value?: PermissionCard }[];
    if (!card?.id || !card.value) break;
    console.log(
      `  approval card: ${card.value.summary} (${card.value.resource}, risk ${card.value.risk}) → allow_matching`,
    );
    state = await agent.invoke(
      new Command({ resume: { [card.id]: { decision: "allow_matching" } } }),
      thread,
    );
  }
  console.log(`    promoted this run: ${Object.keys(state.promotion.promoted).join(", ")}`);
  for (const message of state.messages) {
    if (message.type === "ai" && "tool_calls" in message && (message as AIMessage).tool_calls?.length) {
      const calls = (message as AIMessage).tool_calls ?? [];
      console.log(
        `  model → ${calls.map((c) => c.name).join(" + ")}${calls.length > 1 ? " (one task each, in parallel)" : ""}`,
      );
    } else if (message.type === "tool") {
      const body = JSON.parse(message.text) as {
        code?: string;
        results?: { name: string }[];
        records?: { primaryCitation: { label: string } }[];
      };
      if (body.results) {
        console.log(
          `    ← tool_search promoted ${body.results.map((r) => r.name).join(", ")} (schema bound next turn)`,
        );
        continue;
      }
      console.log(
        `    ← ${body.code ?? `${body.records?.length ?? 0} record(s), e.g. ${body.records?.[0]?.primaryCitation.label ?? "-"}`}`,
      );
    }
  }
  console.log(`  final answer: ${state.messages.at(-1)?.text}`);
  const auths = await ledger.listAuthorizations({ sessionId: "agent-demo" });
  console.log(
    `  authorizations: ${auths.map((a) => `${a.sourceId}/${a.toolId}:${a.decisionSource}`).join(", ")}`,
  );

  step(10, "Audit ledger");
  const summary = await ledger.summary();
  console.log(
    `  ${summary.calls} calls: ${summary.ok} ok, ${summary.errors} errors, ${summary.cacheHits} cache hits, queue wait ${summary.totalQueueWaitMs} ms`,
  );
  for (const row of await ledger.query()) {
    console.log(
      `  ${row.sourceId}/${row.toolId}`.padEnd(34) +
        `${row.status === "ok" ? (row.cacheHit ? "ok (cache)" : "ok") : row.error?.code}`.padEnd(16) +
        `request ${row.requestRef?.slice(7, 19)}… normalized ${row.normalizedRef?.slice(7, 19) ?? "-"}`,
    );
  }
  console.log(
    `\nDone in ${((performance.now() - started) / 1000).toFixed(1)} s. Provider requests served: ${providers.server.requests.length}.`,
  );
} finally {
  await governance.close();
  await providers.server.close();
  await wiki.close();
}
