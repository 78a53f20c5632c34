/**
 * Steps 1–8 of the offline demo: the live catalog, then governed calls straight through the broker
 * (search, cache, lookups, download candidates, invalid input, replay, the private LLM Wiki).
 */

import { type Governance, isGovernanceError } from "sciencegate";
import type { InvokeRequest } from "sciencegate/governance";
import { shortId, step } from "./print.js";

/**
 * Prints the catalog: each source's status and tool count, the revision and a few tool names.
 * @param governance the runtime
 */
export async function showCatalog(governance: Governance): Promise<void> {
  const snapshot = governance.catalog.snapshot() ?? (await governance.refresh());
  for (const source of snapshot.sources) {
    console.log(
      `  ${source.id.padEnd(12)} ${source.status.padEnd(11)} ${source.availableTools.length} tools${source.reason ? ` (${source.reason})` : ""}`,
    );
  }
  console.log(
    `  catalog revision ${snapshot.revision.slice(0, 12)}…, ${snapshot.tools.length} callable tools, e.g.`,
  );
  for (const tool of snapshot.tools.slice(0, 4)) console.log(`    ${tool.sourceId}.${tool.toolId}`);
}

/**
 * Runs steps 2–8 in session `demo`.
 * @param governance the runtime (offline providers and the reference wiki behind it)
 */
export async function runBrokerTour(governance: Governance): Promise<void> {
  const call = (label: string, request: Omit<InvokeRequest, "sessionId">) =>
    invoke(governance, label, request);
  const search = {
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "crispr base editing", max_results: 3 },
  };

  step(2, "A governed search (validation → permission → cache → rate limit → MCP → envelope → CAS → ledger)");
  await call("search", search);

  step(3, "The same search again is served from the cache (and still authorized and audited)");
  await call("cache", search);

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
  const abstracts = {
    sourceId: "pubmed",
    toolId: "fetch_abstracts",
    input: { pmids: ["22000011"] },
    threadId: "demo-thread",
    toolCallId: "call_1",
  };
  await call("first", abstracts);
  const replay = await governance.broker.invoke({ ...abstracts, sessionId: "demo" });
  console.log(`    replayed from the ledger: ${replay.replayed}`);

  step(8, "The private LLM Wiki: off per session until the app enables it");
  const wikiSearch = { sourceId: "llm-wiki", toolId: "search", input: { query: "base editing" } };
  await call("session switch off", wikiSearch);
  await governance.sessions.enableSource("demo", "llm-wiki");
  // Private data is dangerous by default; the demo's operator approves this session's wiki reads.
  await governance.permissions.setApprovalMode("demo", "always_allow");
  await call("enabled: hybrid search, page citations", wikiSearch);
  await call("one page", {
    sourceId: "llm-wiki",
    toolId: "get_page",
    input: { path: "concepts/prime-editing" },
  });
}

/** One broker call, printed: outcome, a few records and candidates, or the structured error. */
async function invoke(governance: Governance, label: string, request: Omit<InvokeRequest, "sessionId">) {
  console.log(`  → ${request.sourceId}.${request.toolId} ${JSON.stringify(request.input)}  (${label})`);
  try {
    const outcome = await governance.broker.invoke({ ...request, sessionId: "demo" });
    const r = outcome.result;
    const how = outcome.cacheHit ? "cache hit" : `${outcome.attempts} attempt(s)`;
    console.log(`    ✓ invocation ${shortId(outcome.invocationId)} · ${how} · licence: ${r.license}`);
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
}
