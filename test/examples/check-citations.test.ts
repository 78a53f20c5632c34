import { describe, expect, test } from "vitest";
import { checkCitations } from "../../examples/demo/check-citations.js";
import type { ExtractionLedgerEntry } from "../../src/artifacts/artifact-ledger-types.js";
import type { McpRecord, McpToolResult } from "../../src/contract/result-types.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";

function record(source: string, label: string, url: string, identifier: string): McpRecord {
  const citation = { label: `[${label}](${url})`, url };
  return {
    identifier,
    identifierType: "id",
    title: label,
    url,
    source,
    citations: [citation],
    primaryCitation: citation,
    contentScope: "abstract",
    crossReferences: [],
    fullTextRetrieved: false,
    warnings: [],
  };
}

/** A ledger with one successful PubMed search (session s1), one arXiv lookup (s1) and one failed call. */
async function bench() {
  const ledger = new MemoryLedger();
  const store = new MemoryContentStore();
  let n = 0;
  const add = async (
    sourceId: string,
    sessionId: string,
    records: McpRecord[],
    status: "ok" | "error" = "ok",
  ) => {
    const result: McpToolResult = {
      records,
      warnings: [],
      attribution: "",
      license: "CC0-1.0",
      retrievedAt: "2026-01-01T00:00:00Z",
      sourceId,
      toolId: "search",
      untrusted: true,
    };
    const { ref } = await store.putJson(result);
    n += 1;
    await ledger.append({
      invocationId: `inv-${n}`,
      sessionId,
      sourceId,
      toolId: "search",
      status,
      startedAt: `2026-01-01T00:00:0${n}Z`,
      finishedAt: `2026-01-01T00:00:0${n}Z`,
      durationMs: 1,
      attempts: 1,
      cacheHit: false,
      queueWaitMs: 0,
      ...(status === "ok"
        ? { normalizedRef: ref }
        : { error: { code: "TIMEOUT", message: "late", retryable: true, attempts: 1 } }),
    });
  };
  await add("pubmed", "s1", [record("pubmed", "PMID:1", "https://pubmed.ncbi.nlm.nih.gov/1/", "1")]);
  await add("arxiv", "s1", [
    record("arxiv", "arXiv:2403.01234v2", "https://arxiv.org/abs/2403.01234v2", "2403.01234"),
  ]);
  await add("pubmed", "s2", [record("pubmed", "PMID:2", "https://pubmed.ncbi.nlm.nih.gov/2/", "2")]);
  await add("pubmed", "s1", [record("pubmed", "PMID:3", "https://pubmed.ncbi.nlm.nih.gov/3/", "3")], "error");
  return { ledger, store };
}

describe("checkCitations", () => {
  test("every fact backed: each label names the invocation that returned it", async () => {
    const report = await checkCitations(
      await bench(),
      "- Base editing works [PMID:1].\n- A preprint predicts off-targets [arXiv:2403.01234v2](https://arxiv.org/abs/2403.01234v2).",
      { sessionId: "s1" },
    );
    expect(report.ok).toBe(true);
    expect(report.facts.map((f) => f.citations)).toEqual([
      [{ label: "PMID:1", invocationId: "inv-1", sourceId: "pubmed", toolId: "search" }],
      [{ label: "arXiv:2403.01234v2", invocationId: "inv-2", sourceId: "arxiv", toolId: "search" }],
    ]);
  });

  test.each([
    { answer: "Base editing works.", problem: /^no citation$/ },
    { answer: "Base editing works [PMID:999].", problem: /^PMID:999 was returned by no governed invocation/ },
    {
      answer: "Another session's record [PMID:2].",
      problem: /^PMID:2 was returned by no governed invocation/,
    },
    { answer: "A failed call's record [PMID:3].", problem: /^PMID:3 was returned by no governed invocation/ },
    {
      answer: "Forged link [PMID:1](https://evil.example/1).",
      problem: /^url_not_returned: .*evil\.example/,
    },
    {
      answer: "The full text says so [arXiv:2403.01234v2].",
      problem: /^full_text_not_extracted: .*paper_extract_pdf/,
    },
  ])("refuses: $problem", async ({ answer, problem }) => {
    const report = await checkCitations(await bench(), `Summary:\n- Cited fact [PMID:1].\n- ${answer}`, {
      sessionId: "s1",
    });
    expect(report.ok).toBe(false);
    expect(report.facts[0]?.problems).toEqual([]);
    expect(report.facts[1]?.problems).toHaveLength(1);
    expect(report.facts[1]?.problems[0]).toMatch(problem);
  });

  test("a sentence without a citation inside a cited line is its own unbacked fact", async () => {
    const report = await checkCitations(await bench(), "Base editing works [PMID:1]. It cures everything.", {
      sessionId: "s1",
    });
    expect(report.facts.map((f) => f.problems)).toEqual([[], ["no citation"]]);
  });

  test("a full-text claim passes once a paper_extract_pdf row of the record is in the ledger", async () => {
    const sources = await bench();
    const entry: ExtractionLedgerEntry = {
      kind: "paper_extract_pdf",
      artifactJobId: "job-1",
      extractionJobId: "extract-job-1",
      mcpInvocationId: "inv-2",
      candidateId: "arxiv:2403.01234v2:pdf",
      sourceId: "arxiv",
      sourceRecordId: "2403.01234",
      inputSha256: "0".repeat(64),
      textPath: "/data/papers/job-1/fulltext.md",
      manifestPath: "/data/papers/job-1/manifest.json",
      pageCount: 4,
      fullTextRetrieved: true,
      contentScope: "full-text",
    };
    const { ref } = await sources.store.putJson(entry);
    await sources.ledger.append({
      invocationId: "inv-extract",
      sessionId: "s1",
      sourceId: "arxiv",
      toolId: "paper_extract_pdf",
      status: "ok",
      startedAt: "2026-01-01T00:00:09Z",
      finishedAt: "2026-01-01T00:00:09Z",
      durationMs: 1,
      attempts: 1,
      cacheHit: false,
      queueWaitMs: 0,
      normalizedRef: ref,
    });
    const report = await checkCitations(sources, "The full text says so [arXiv:2403.01234v2].", {
      sessionId: "s1",
    });
    expect(report.ok).toBe(true);
    expect(report.facts[0]).toMatchObject({
      fullText: true,
      problems: [],
      extractionInvocationId: "inv-extract",
    });
  });

  test("an empty answer is not backed", async () => {
    expect((await checkCitations(await bench(), "  \n")).ok).toBe(false);
  });
});
