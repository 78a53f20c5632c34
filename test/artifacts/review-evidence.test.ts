import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createScienceGovernance as createGovernance,
  type ScienceGovernance as Governance,
} from "../../src/adk/index.js";
import {
  DOWNLOAD_LEDGER_TOOL_ID,
  type DownloadLedgerEntry,
  EXTRACTION_LEDGER_TOOL_ID,
  type ExtractionLedgerEntry,
} from "../../src/artifacts/artifact-ledger-types.js";
import type { Claim } from "../../src/artifacts/evidence-claims.js";
import { fullTextExtractions } from "../../src/artifacts/full-text-extractions.js";
import { workIdentifierKey } from "../../src/artifacts/identifier-match.js";
import { reviewEvidence } from "../../src/artifacts/review-evidence.js";
import type { ArtifactCandidate } from "../../src/contract/result-types.js";
import { isGovernanceError } from "../../src/core/errors.js";
import { FileContentStore } from "../../src/governance/audit/content-store.js";
import { SqliteLedger } from "../../src/governance/audit/sqlite-ledger.js";
import { createSourcesServer } from "../../src/servers/sources/sources-server.js";
import {
  type FakeProviderServer,
  providerEnvFor,
  startFakeProviderServer,
} from "../../src/testing/fake-provider-server.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { arxivFakeRoutes } from "../fixtures/providers/arxiv/routes.js";
import { pubmedFakeRoutes } from "../fixtures/providers/pubmed/routes.js";

const LOCAL_TOOLS = join(import.meta.dirname, "../adk/fixtures/ts-tools");

let dir: string;
let ledger: SqliteLedger;
let store: FileContentStore;
let provider: FakeProviderServer;
let sources: Governance;
let local: Governance;
/** Invocation ids of real broker calls, and the artifact jobs appended for them. */
const ids = {
  arxiv: "", // arxiv prepare_paper_download 2403.01234: extracted (job-arxiv)
  pubmed: "", // pubmed prepare_paper_download PMID 39000001: extracted as PMC9000001 (job-pubmed)
  oldStyle: "", // arxiv lookup hep-th/9901001: only a tampered extraction (job-tampered)
  failed: "", // pubmed prepare_paper_download of a PMID without open-access copy
  tampered: "", // pubmed fetch_abstracts 22000011 whose normalized CAS copy was altered afterwards
  local: "", // local TypeScript function tool takes_string
};
let seq = 0;

function casPath(ref: string): string {
  const hex = ref.replace("sha256:", "");
  return join(store.root, "sha256", hex.slice(0, 2), hex);
}

/** Appends a ledger row of a built-in the way the download manager and extraction write them. */
async function appendBuiltinRow(toolId: string, sourceId: string, entry: object): Promise<string> {
  seq += 1;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
  const invocationId = `${toolId}-${seq}`;
  await sources.ledgerWriter.append({
    invocationId,
    sessionId: "s1",
    sourceId,
    toolId,
    status: "ok",
    startedAt: at,
    finishedAt: at,
    durationMs: 5,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    requestRef: (await store.putJson({ toolId, seq })).ref,
    normalizedRef: (await store.putJson(entry)).ref,
  });
  return invocationId;
}

/** A completed download and a successful extraction of `candidate`, as ledger rows; returns the extraction row. */
async function appendExtraction(mcpInvocationId: string, candidate: ArtifactCandidate, jobId: string) {
  const { sourceId, sourceRecordId, candidateId } = candidate;
  const download: DownloadLedgerEntry = {
    kind: "artifact_download",
    planId: `plan-${jobId}`,
    jobId,
    mcpInvocationId,
    candidateId,
    sourceId,
    sourceRecordId,
    url: candidate.url,
    finalPath: join(dir, "workspace", `${jobId}.pdf`),
    destinationPath: `${jobId}.pdf`,
    actualChecksum: `sha256:${"a".repeat(64)}`,
    bytesDownloaded: 1234,
    status: "completed",
  };
  await appendBuiltinRow(DOWNLOAD_LEDGER_TOOL_ID, sourceId, download);
  const extraction: ExtractionLedgerEntry = {
    kind: "paper_extract_pdf",
    artifactJobId: jobId,
    extractionJobId: `extract-${jobId}`,
    mcpInvocationId,
    candidateId,
    sourceId,
    sourceRecordId,
    inputSha256: "a".repeat(64),
    textPath: join(dir, "papers", jobId, "fulltext.md"),
    manifestPath: join(dir, "papers", jobId, "manifest.json"),
    pageCount: 3,
    fullTextRetrieved: true,
    contentScope: "full-text",
  };
  return appendBuiltinRow(EXTRACTION_LEDGER_TOOL_ID, sourceId, extraction);
}

async function invoke(sourceId: string, toolId: string, input: object) {
  return sources.broker.invoke({ sourceId, toolId, input, sessionId: "s1" });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sciencegate-evidence-"));
  // No inline objects: every object stays a file, so the tests can tamper with them on disk.
  ledger = await SqliteLedger.open(join(dir, "ledger.sqlite"), { maxInlineBytes: 0 });
  store = new FileContentStore(join(dir, "cas"));
  provider = await startFakeProviderServer({ routes: [...arxivFakeRoutes(), ...pubmedFakeRoutes()] });
  const env = providerEnvFor(provider.url);
  sources = await createGovernance({
    config: { mcpServers: {} },
    cwd: dir,
    env: {},
    mcp: {
      pool: createInMemoryPool({
        "sciencegate-sources": () => createSourcesServer({ env, only: ["arxiv", "pubmed"] }),
      }),
    },
    storage: { ledger, contentStore: store },
  });
  writeFileSync(join(dir, "science.toml"), `[tools.local]\npath = ${JSON.stringify(LOCAL_TOOLS)}\n`);
  // arXiv asks for 3 s between requests: the second arXiv call waits while the local tools load.
  const arxivCalls = (async () => {
    const prepare = await invoke("arxiv", "prepare_paper_download", { id: "2403.01234" });
    return [prepare, await invoke("arxiv", "lookup", { ids: ["hep-th/9901001"] })] as const;
  })();
  [local] = await Promise.all([
    createGovernance({ cwd: dir, env: { PATH: process.env.PATH }, storage: { ledger, contentStore: store } }),
    arxivCalls,
  ]);
  const [arxiv, oldStyle] = await arxivCalls;
  const pubmed = await invoke("pubmed", "prepare_paper_download", { id: "39000001" });
  const tampered = await invoke("pubmed", "fetch_abstracts", { pmids: ["22000011"] });
  ids.arxiv = arxiv.invocationId;
  ids.pubmed = pubmed.invocationId;
  ids.oldStyle = oldStyle.invocationId;
  ids.tampered = tampered.invocationId;
  await sources.broker
    .invoke({
      sourceId: "pubmed",
      toolId: "prepare_paper_download",
      input: { id: "39000002" },
      sessionId: "s1",
      threadId: "t1",
      toolCallId: "fail",
    })
    .catch(() => undefined);
  ids.failed = (await ledger.findByCall("t1", "fail"))?.invocationId ?? "";
  ids.local = (await local.callTool("local.takes_string", { value: "a" })).invocationId;

  const [arxivPdf] = arxiv.result.artifacts ?? [];
  const [pubmedPdf] = pubmed.result.artifacts ?? [];
  if (!arxivPdf || !pubmedPdf) throw new Error("the prepare calls returned no candidates");
  await appendExtraction(ids.arxiv, arxivPdf, "job-arxiv");
  await appendExtraction(ids.pubmed, pubmedPdf, "job-pubmed");
  const oldStylePdf = {
    ...arxivPdf,
    candidateId: "arxiv:hep-th/9901001v3:pdf",
    sourceRecordId: "hep-th/9901001",
  };
  const tamperedExtraction = await appendExtraction(ids.oldStyle, oldStylePdf, "job-tampered");
  writeFileSync(casPath((await ledger.get(tamperedExtraction))?.normalizedRef ?? ""), '{"kind":"forged"}');
  writeFileSync(casPath((await ledger.get(ids.tampered))?.normalizedRef ?? ""), '{"records":[]}');
}, 60_000);

afterAll(async () => {
  await local?.close();
  await sources?.close();
  await provider?.close();
});

const claim = (evidence: Claim["evidence"], fullText = false): Claim[] => [
  { text: "X holds.", fullText, evidence },
];

describe("reviewEvidence rejects", () => {
  test.each([
    [
      "an invocation the ledger does not know",
      () => ({ mcpInvocationId: "inv-made-up" }),
      {},
      "not_governed",
      /not in the governed ledger/,
    ],
    [
      "an invocation of another session",
      () => ({ mcpInvocationId: ids.arxiv }),
      { sessionId: "s2" },
      "not_governed",
      /belongs to session "s1"/,
    ],
    [
      "a failed invocation",
      () => ({ mcpInvocationId: ids.failed }),
      {},
      "invocation_failed",
      /failed with LICENSE_BLOCKED: .*repeat the call/,
    ],
    [
      "an invocation whose CAS copy was altered",
      () => ({ mcpInvocationId: ids.tampered, recordId: "22000011" }),
      {},
      "cas_corrupt",
      /no longer matches its SHA-256/,
    ],
    [
      "a record the invocation did not return",
      () => ({ mcpInvocationId: ids.arxiv, recordId: "2501.00001" }),
      {},
      "record_not_returned",
      /returned no record "2501.00001" \(it returned "2403.01234"\)/,
    ],
    [
      "a record another invocation returned",
      () => ({ mcpInvocationId: ids.pubmed, recordId: "2403.01234" }),
      {},
      "record_not_returned",
      /returned "39000001"/,
    ],
    [
      "a URL that is not the record's",
      () => ({ mcpInvocationId: ids.arxiv, recordId: "2403.01234", url: "https://arxiv.org/abs/2501.00001" }),
      {},
      "url_not_returned",
      /cite one of https:\/\/arxiv.org\/abs\/2403.01234/,
    ],
    [
      "a URL no record carries",
      () => ({ mcpInvocationId: ids.arxiv, url: "https://evil.example/paper" }),
      {},
      "url_not_returned",
      /not one that invocation/,
    ],
    [
      "an artifact job that was never extracted",
      () => ({ mcpInvocationId: ids.arxiv, recordId: "2403.01234", artifactJobId: "job-none" }),
      {},
      "full_text_not_extracted",
      /run paper_extract_pdf \{artifactJobId: "job-none"\}/,
    ],
    [
      "an artifact job of another paper",
      () => ({ mcpInvocationId: ids.arxiv, recordId: "2403.01234", artifactJobId: "job-pubmed" }),
      {},
      "artifact_job_mismatch",
      /extracted pubmed record "PMC9000001", not record "2403.01234"/,
    ],
  ])("%s", async (_name, evidence, options, reason, message) => {
    const review = await reviewEvidence({
      governance: { ledger, store },
      claims: claim([evidence()]),
      ...options,
    });
    expect(review.accepted).toBe(false);
    expect(review.claims[0]?.accepted).toBe(false);
    expect(review.claims[0]?.evidence[0]).toMatchObject({
      accepted: false,
      reason,
      message: expect.stringMatching(message),
    });
  });

  test("a full-text claim on a record whose PDF was never extracted, naming the fix", async () => {
    const review = await reviewEvidence({
      governance: local,
      claims: claim([{ mcpInvocationId: ids.oldStyle, recordId: "hep-th/9901001" }], true),
    });
    expect(review.claims[0]?.evidence[0]).toMatchObject({
      accepted: false,
      reason: "full_text_not_extracted",
      message: expect.stringMatching(
        /no successful paper_extract_pdf of record "hep-th\/9901001".*1 extraction row\(s\) were ignored.*artifact_download/,
      ),
      record: { identifier: "hep-th/9901001", contentScope: "abstract", fullTextRetrieved: false },
    });
  });

  test("a full-text claim whose only evidence cites no record", async () => {
    const review = await reviewEvidence({
      governance: local,
      claims: claim([{ mcpInvocationId: ids.local }], true),
    });
    expect(review.claims[0]?.evidence[0]).toMatchObject({
      accepted: false,
      reason: "full_text_not_extracted",
      message: expect.stringMatching(/cites no record/),
    });
  });

  test("one bad evidence rejects its claim but not the other claims", async () => {
    const review = await reviewEvidence({
      governance: sources,
      claims: [
        { id: "good", text: "A.", evidence: [{ mcpInvocationId: ids.arxiv, recordId: "2403.01234" }] },
        { id: "bad", text: "B.", evidence: [{ mcpInvocationId: ids.arxiv }, { mcpInvocationId: "nope" }] },
      ],
    });
    expect(review.accepted).toBe(false);
    expect(review.claims.map((c) => [c.id, c.accepted])).toEqual([
      ["good", true],
      ["bad", false],
    ]);
    expect(review.claims[1]?.evidence.map((e) => e.accepted)).toEqual([true, false]);
  });
});

describe("reviewEvidence accepts", () => {
  test.each([
    ["the record's bare identifier", { recordId: "2403.01234" }],
    ["the identifier with arXiv: prefix and version", { recordId: "arXiv:2403.01234v2" }],
    [
      "the versioned citation URL, host case and trailing slash aside",
      { url: "https://ARXIV.org/abs/2403.01234v2/" },
    ],
    [
      "identifier and record URL together",
      { recordId: "2403.01234", url: "https://arxiv.org/abs/2403.01234" },
    ],
    ["an empty optional field as absent", { recordId: "2403.01234", url: "" }],
  ])("arXiv evidence by %s", async (_name, cited) => {
    const review = await reviewEvidence({
      governance: sources,
      claims: claim([{ mcpInvocationId: ids.arxiv, ...cited }]),
    });
    expect(review.accepted).toBe(true);
    const [evidence] = review.claims[0]?.evidence ?? [];
    expect(evidence).toMatchObject({
      accepted: true,
      record: { identifier: "2403.01234", citation: { url: "https://arxiv.org/abs/2403.01234v2" } },
    });
    expect(evidence?.reason).toBeUndefined();
    expect(Object.values(evidence ?? {})).not.toContain("");
  });

  test("a local function tool's execution, as traceable as an MCP call", async () => {
    const review = await reviewEvidence({
      governance: local,
      claims: claim([{ mcpInvocationId: ids.local }]),
    });
    expect(review).toEqual({
      accepted: true,
      claims: [
        {
          id: "claim-1",
          text: "X holds.",
          fullText: false,
          accepted: true,
          evidence: [{ mcpInvocationId: ids.local, accepted: true }],
        },
      ],
    });
  });

  test.each([
    ["arXiv, extracted under the same id", "arxiv", "2403.01234", "job-arxiv"],
    ["PubMed PMID 39000001, extracted as its PMC9000001", "pubmed", "PMID:39000001", "job-pubmed"],
  ] as const)(
    "a full-text claim on %s, and the record counts as full text",
    async (_name, key, recordId, job) => {
      const review = await reviewEvidence({
        governance: sources,
        claims: claim([{ mcpInvocationId: ids[key], recordId, artifactJobId: job }], true),
      });
      expect(review.accepted).toBe(true);
      expect(review.claims[0]?.evidence[0]).toMatchObject({
        accepted: true,
        record: { contentScope: "full-text", fullTextRetrieved: true },
        extraction: {
          artifactJobId: job,
          extractionJobId: `extract-${job}`,
          textPath: expect.stringContaining(job),
        },
      });
    },
  );

  test("a full-text claim with one extracted record keeps its abstract-level evidence at its stored scope", async () => {
    const review = await reviewEvidence({
      governance: sources,
      claims: claim(
        [
          { mcpInvocationId: ids.oldStyle, recordId: "hep-th/9901001" },
          { mcpInvocationId: ids.arxiv, recordId: "2403.01234" },
        ],
        true,
      ),
    });
    expect(review.accepted).toBe(true);
    expect(
      review.claims[0]?.evidence.map((e) => [e.record?.contentScope, e.record?.fullTextRetrieved]),
    ).toEqual([
      ["abstract", false],
      ["full-text", true],
    ]);
  });

  test("the same evidence without fullText is accepted at abstract scope", async () => {
    const review = await reviewEvidence({
      governance: sources,
      claims: claim([{ mcpInvocationId: ids.oldStyle, recordId: "HEP-TH/9901001v3" }]),
    });
    expect(review.claims[0]?.evidence[0]).toMatchObject({
      accepted: true,
      record: { contentScope: "abstract" },
    });
  });
});

describe("reviewEvidence input", () => {
  test.each([
    ["a claim list that is not an array", { text: "x" }, "claims"],
    ["an empty statement", [{ text: " ", evidence: [{ mcpInvocationId: "a" }] }], "claims.0.text"],
    ["a claim without evidence", [{ text: "x", evidence: [] }], "claims.0.evidence"],
    [
      "a non-string invocation id",
      [{ text: "x", evidence: [{ mcpInvocationId: 3 }] }],
      "claims.0.evidence.0.mcpInvocationId",
    ],
    [
      "a misspelled field",
      [{ text: "x", evidence: [{ mcpInvocationId: "a", recordID: "1" }] }],
      "claims.0.evidence.0",
    ],
    [
      "a non-boolean fullText",
      [{ text: "x", fullText: "yes", evidence: [{ mcpInvocationId: "a" }] }],
      "claims.0.fullText",
    ],
  ])("throws INVALID_INPUT with the path for %s", async (_name, claims, path) => {
    const error = await reviewEvidence({ governance: { ledger, store }, claims: claims as never }).catch(
      (e: unknown) => e,
    );
    expect(isGovernanceError(error) && error.code).toBe("INVALID_INPUT");
    const issues = (isGovernanceError(error) ? error.data?.issues : []) as { path: string }[];
    expect(issues.map((issue) => issue.path)).toContain(path);
    expect((error as Error).message).toContain(path);
  });
});

describe("fullTextExtractions", () => {
  test.each([
    ["arxiv", "arXiv:2403.01234v2", ["job-arxiv"]],
    ["arxiv", "https://arxiv.org/pdf/2403.01234v1", ["job-arxiv"]],
    ["pubmed", "PMCID:pmc9000001.1", ["job-pubmed"]],
    ["pubmed", "2403.01234", []],
    ["arxiv", "hep-th/9901001", []],
  ])("%s %s → %j (a tampered extraction counts for nothing)", async (sourceId, sourceRecordId, jobs) => {
    const found = await fullTextExtractions({ governance: sources, sourceId, sourceRecordId });
    expect(found.map((entry) => entry.artifactJobId)).toEqual(jobs);
  });
});

describe("workIdentifierKey", () => {
  test.each([
    ["arXiv:2403.01234v1", "2403.01234"],
    ["https://arxiv.org/abs/2403.01234v3", "2403.01234"],
    ["10.48550/arXiv.2403.01234", "2403.01234"],
    ["math.GT/0309136v2", "math/0309136"],
    ["PMID:22663011", "22663011"],
    ["https://pubmed.ncbi.nlm.nih.gov/22663011/", "22663011"],
    ["pmcid: pmc3386462.2", "PMC3386462"],
    ["https://pmc.ncbi.nlm.nih.gov/articles/PMC3386462/", "PMC3386462"],
    ["doi:10.1038/NATURE12373", "10.1038/nature12373"],
    ["https://doi.org/10.1101/2024.01.01.123456v2", "10.1101/2024.01.01.123456"],
    ["P04637", "P04637"],
  ])("%s → %s", (value, key) => {
    expect(workIdentifierKey(value)).toBe(key);
  });
});
