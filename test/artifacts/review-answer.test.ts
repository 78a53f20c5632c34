import { describe, expect, test } from "vitest";
import type { ExtractionLedgerEntry } from "../../src/artifacts/artifact-ledger-types.js";
import { reviewAnswer } from "../../src/artifacts/review-answer.js";
import type { McpRecord, McpToolResult } from "../../src/contract/result-types.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { ledgerUnderTest } from "../../src/testing/conformance/ledger-under-test.js";

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
  const ledger = ledgerUnderTest(new MemoryLedger());
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

describe("reviewAnswer", () => {
  test("every fact backed: each label names the invocation that returned it", async () => {
    const report = await reviewAnswer({
      governance: await bench(),
      answer:
        "- Base editing works [PMID:1].\n- A preprint predicts off-targets [arXiv:2403.01234v2](https://arxiv.org/abs/2403.01234v2).",
      sessionId: "s1",
    });
    expect(report.accepted).toBe(true);
    expect(report.facts.map((f) => f.citations)).toMatchObject([
      [
        {
          label: "PMID:1",
          invocationId: "inv-1",
          sourceId: "pubmed",
          toolId: "search",
          evidence: { mcpInvocationId: "inv-1", recordId: "1", accepted: true, record: { identifier: "1" } },
        },
      ],
      [
        {
          label: "arXiv:2403.01234v2",
          url: "https://arxiv.org/abs/2403.01234v2",
          invocationId: "inv-2",
          sourceId: "arxiv",
          toolId: "search",
          evidence: { url: "https://arxiv.org/abs/2403.01234v2", accepted: true },
        },
      ],
    ]);
    expect(report.facts.map((f) => [f.id, f.accepted])).toEqual([
      ["fact-1", true],
      ["fact-2", true],
    ]);
    expect(report).toMatchObject({ omittedFacts: 0, omittedCitations: 0, searchLimited: false });
    // Only the session's 3 successful rows were searched.
    expect(report.searchedInvocations).toBe(2);
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
      answer: "Script link [PMID:1](javascript:alert(1)).",
      problem: /^url_not_returned: The URL javascript:alert\(1 is not/,
    },
    {
      answer: "The full text says so [arXiv:2403.01234v2].",
      problem: /^full_text_not_extracted: .*paper_extract_pdf/,
    },
  ])("refuses: $problem", async ({ answer, problem }) => {
    const report = await reviewAnswer({
      governance: await bench(),
      answer: `Summary:\n- Cited fact [PMID:1].\n- ${answer}`,
      sessionId: "s1",
    });
    expect(report.accepted).toBe(false);
    expect(report.facts[0]?.problems).toEqual([]);
    expect(report.facts[1]?.accepted).toBe(false);
    expect(report.facts[1]?.problems).toHaveLength(1);
    expect(report.facts[1]?.problems[0]).toMatch(problem);
  });

  test("labels without a prefix are citations when an invocation returned them; other brackets are prose", async () => {
    const sources = await bench();
    const { ref } = await sources.store.putJson({
      records: [
        record("chembl", "CHEMBL941", "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941", "CHEMBL941"),
        record(
          "chembl",
          "ChEMBL activity 7 (assay CHEMBL9)",
          "https://www.ebi.ac.uk/chembl/assay/CHEMBL9",
          "7",
        ),
      ],
    });
    await sources.ledger.append({
      invocationId: "inv-chembl",
      sessionId: "s1",
      sourceId: "chembl",
      toolId: "search_molecules",
      status: "ok",
      startedAt: "2026-01-01T00:00:08Z",
      finishedAt: "2026-01-01T00:00:08Z",
      durationMs: 1,
      attempts: 1,
      cacheHit: false,
      queueWaitMs: 0,
      normalizedRef: ref,
    });
    const report = await reviewAnswer({
      governance: sources,
      answer: [
        "- Imatinib is in ChEMBL [CHEMBL941] [sic].",
        "- Its activity was measured [ChEMBL activity 7 (assay CHEMBL9)].",
        "- The docs say so [see the docs](https://docs.example/x).",
      ].join("\n"),
      sessionId: "s1",
    });
    expect(report.facts.map((f) => f.citations.map((c) => [c.label, c.invocationId]))).toEqual([
      [["CHEMBL941", "inv-chembl"]],
      [["ChEMBL activity 7 (assay CHEMBL9)", "inv-chembl"]],
      [["see the docs", undefined]],
    ]);
    expect(report.facts.map((f) => f.accepted)).toEqual([true, true, false]);
    expect(report.facts[2]?.problems).toEqual([
      "see the docs was returned by no governed invocation of this session",
    ]);
  });

  test("a sentence without a citation inside a cited line is its own unbacked fact", async () => {
    const report = await reviewAnswer({
      governance: await bench(),
      answer: "Base editing works [PMID:1]. It cures everything.",
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
    const report = await reviewAnswer({
      governance: sources,
      answer: "The full text says so [arXiv:2403.01234v2].",
      sessionId: "s1",
    });
    expect(report.accepted).toBe(true);
    expect(report.facts[0]).toMatchObject({
      fullText: true,
      problems: [],
      extractionInvocationId: "inv-extract",
    });
  });

  test("an empty answer is not backed", async () => {
    expect((await reviewAnswer({ governance: await bench(), answer: "  \n" })).accepted).toBe(false);
  });

  test("bounded: facts past maxFacts and labels past maxCitations are counted, not reviewed", async () => {
    const answer = Array.from({ length: 5 }, (_, i) => `- Fact ${i} [PMID:1] [PMID:999].`).join("\n");
    const report = await reviewAnswer({
      governance: await bench(),
      answer,
      sessionId: "s1",
      maxFacts: 3,
      maxCitations: 5,
    });
    expect(report.facts).toHaveLength(3);
    expect(report.facts.map((f) => f.citations.length)).toEqual([2, 2, 1]);
    expect(report.omittedFacts).toBe(2);
    expect(report.omittedCitations).toBe(1 + 4);
    expect(report.facts[2]?.problems[0]).toBe("1 citation(s) past the review's limit were not checked");
    expect(report.accepted).toBe(false);
    // Limits never make an unreviewed answer pass: one accepted fact and one left out is not accepted.
    const cut = await reviewAnswer({
      governance: await bench(),
      answer: "- A [PMID:1].\n- B [PMID:1].",
      sessionId: "s1",
      maxFacts: 1,
    });
    expect(cut.facts.map((f) => f.accepted)).toEqual([true]);
    expect(cut).toMatchObject({ accepted: false, omittedFacts: 1 });
  });

  test("only the latest maxInvocations successful rows are searched for labels", async () => {
    const report = await reviewAnswer({
      governance: await bench(),
      answer: "Old record [PMID:1]. Newer record [arXiv:2403.01234v2].",
      sessionId: "s1",
      maxInvocations: 1,
    });
    expect(report).toMatchObject({ searchedInvocations: 1, searchLimited: true });
    expect(report.facts.map((f) => f.accepted)).toEqual([false, true]);
    expect(report.facts[0]?.problems).toEqual([
      "PMID:1 was returned by no governed invocation of this session",
    ]);
  });

  test("hostile text: a megabyte of unclosed labels is scanned in linear time", async () => {
    const started = performance.now();
    const report = await reviewAnswer({
      governance: await bench(),
      answer: `${"[a:".repeat(350_000)}x`,
      sessionId: "s1",
    });
    expect(report.facts).toHaveLength(1);
    expect(report.facts[0]?.problems).toEqual(["no citation"]);
    const links = await reviewAnswer({
      governance: await bench(),
      answer: `${"[a:1](".repeat(170_000)}x`,
      sessionId: "s1",
    });
    expect(links.facts[0]?.citations).toHaveLength(500);
    expect(links.omittedCitations).toBe(170_000 - 500);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
