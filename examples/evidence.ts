/**
 * `npx tsx examples/evidence.ts`: a governed download, then the PDF's extraction in a later turn, offline.
 * A scripted model plans the download of an arXiv preprint (`mcp__arxiv__prepare_paper_download`),
 * asks for it with `artifact_download` (downloads are dangerous: the run pauses on an approval card,
 * answered here in code) and, in its next turn, extracts it with `paper_extract_pdf` under the bounds
 * given to `createGovernance`. The arXiv API answers from the loopback stand-in of ./offline/providers.ts
 * and the PDF comes from ./offline/paper.ts's fetch seam, so the download's own checks (HTTPS, the
 * manifest's host allowlist, licence, the address check) run as in production. Last, the same PDF given
 * to `extractPdf` with a lower page bound is refused, naming the bound. Every outcome is asserted: the
 * process exits non-zero when one is wrong.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, type Interrupt, isInterrupted, MemorySaver } from "@langchain/langgraph";
import {
  type ApprovalHitlRequest,
  createGovernance,
  createGovernedAgent,
  isGovernanceError,
  type McpToolResult,
} from "sciencegate";
import { type DownloadResult, extractPdf, type PaperExtractResult } from "sciencegate/artifacts";
import { hasCalled, lastToolResult, ScriptedChatModel } from "sciencegate/testing";
import { arxivPaperFetch, offlineLookup } from "./offline/paper.js";
import { startOfflineProviders } from "./offline/providers.js";

const PREPARE = "mcp__arxiv__prepare_paper_download";
const dataDir = mkdtempSync(join(tmpdir(), "sciencegate-evidence-"));
const providers = await startOfflineProviders();
const paperFetch = arxivPaperFetch();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir },
  downloads: { fetch: paperFetch, lookup: offlineLookup },
  // The extraction bounds of paper_extract_pdf (the defaults: 50 MiB, 200 pages, 20 M characters,
  // 512 MiB of memory, 120 s); pdf.js, so the output does not depend on pdftotext being installed.
  extraction: { extractor: "pdfjs", limits: { maxBytes: 10 * 1024 * 1024, maxPages: 50, timeoutMs: 60_000 } },
});

// Like a real model, the script reads earlier tool results to pass the invocation, candidate and job ids on.
const model = new ScriptedChatModel((messages) => {
  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, args }] });
  if (!hasCalled(messages, "tool_search")) return call("tool_search", { query: `select:${PREPARE}` });
  if (!hasCalled(messages, PREPARE)) return call(PREPARE, { id: "arXiv:2403.01234" });
  const plan = lastToolResult<McpToolResult & { invocationId: string }>(messages, PREPARE);
  const candidate = plan?.artifacts?.[0];
  if (plan && candidate && !hasCalled(messages, "artifact_download"))
    return call("artifact_download", {
      mcpInvocationId: plan.invocationId,
      candidateId: candidate.candidateId,
    });
  const download = lastToolResult<DownloadResult>(messages, "artifact_download");
  // Extraction must come in a later turn than the download that made the file.
  if (download?.status === "completed" && !hasCalled(messages, "paper_extract_pdf"))
    return call("paper_extract_pdf", { artifactJobId: download.jobId });
  return { text: "I read the preprint in full." };
});
const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "paper-thread" } };

try {
  let state = await agent.invoke({ messages: [new HumanMessage("Read arXiv 2403.01234 in full.")] }, config);
  const cards: string[] = [];
  while (isInterrupted(state)) {
    const resume: Record<string, { decision: "allow_once" }> = {};
    for (const card of state[INTERRUPT] as Interrupt<ApprovalHitlRequest>[]) {
      if (!card.id || !card.value) continue;
      cards.push(card.value.sciencegate.toolId);
      console.log(`card: ${card.value.sciencegate.summary} -> allow_once`);
      resume[card.id] = { decision: "allow_once" };
    }
    state = await agent.invoke(new Command({ resume }), config);
  }
  assert.deepEqual(cards, ["artifact_download"], "one card, for the download");

  const download = lastToolResult<DownloadResult>(state.messages, "artifact_download");
  assert.equal(download?.status, "completed", `the download completed: ${JSON.stringify(download)}`);
  assert.deepEqual(paperFetch.requests, ["https://arxiv.org/pdf/2403.01234v2"]);
  console.log(`download: ${download.status}, ${download.bytesDownloaded} bytes, ${download.actualChecksum}`);

  const extraction = lastToolResult<PaperExtractResult>(state.messages, "paper_extract_pdf");
  assert.equal(extraction?.pageCount, 4, `four pages extracted: ${JSON.stringify(extraction)}`);
  assert.equal(extraction.contentScope, "full-text");
  const manifest = JSON.parse(readFileSync(extraction.manifestPath, "utf8")) as {
    parser: string;
    limits: { maxPages: number };
    pages: { page: number; needsVision: boolean }[];
  };
  assert.equal(manifest.limits.maxPages, 50, "the extraction ran under the bounds given");
  const figures = manifest.pages.filter((p) => p.needsVision).map((p) => p.page);
  assert.deepEqual(figures, [4], "the page without text needs vision");
  assert.match(readFileSync(extraction.textPath, "utf8"), /## Page 2\n+Methods\. Candidate off-target sites/);
  console.log(
    `extraction: ${extraction.pageCount} pages by ${manifest.parser}, page ${figures} needs vision`,
  );

  const rows = await governance.ledger.query({ sessionId: "paper-thread" });
  const summary = rows.map((r) => `${r.sourceId}/${r.toolId} ${r.status}`).sort();
  assert.deepEqual(summary, [
    "arxiv/prepare_paper_download ok",
    "sciencegate/artifact_download ok",
    "sciencegate/paper_extract_pdf ok",
  ]);
  for (const line of summary) console.log(`ledger: ${line}`);

  // The bounds refuse a file that crosses one, naming it; nothing is written.
  const refused = await extractPdf(
    { pdfPath: download.finalPath, outDir: join(dataDir, "bounded") },
    { maxPages: 2 },
  ).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(isGovernanceError(refused), `a bound crossed is a GovernanceError: ${String(refused)}`);
  assert.equal(refused.code, "RESPONSE_TOO_LARGE");
  assert.equal((refused.data as { limit?: string } | undefined)?.limit, "maxPages");
  console.log(`bound: maxPages 2 -> ${refused.code} (${(refused.data as { limit: string }).limit})`);
  console.log(`answer: ${state.messages.at(-1)?.text}`);
} finally {
  await governance.close();
  await providers.server.close();
}
