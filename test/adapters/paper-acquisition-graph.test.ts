import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotation,
  Command,
  INTERRUPT,
  type Interrupt,
  isInterrupted,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import type { HITLRequest } from "langchain";
import { afterEach, describe, expect, test } from "vitest";
import {
  createPaperAcquisitionGraph,
  type PaperAcquisitionGraph,
} from "../../src/adapters/paper-acquisition-graph.js";
import type { AcquiredPaper, PaperAcquisitionCandidate } from "../../src/adapters/paper-acquisition-state.js";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../src/governance/permissions/grant-store.js";
import type { PermissionCard } from "../../src/governance/permissions/permission-types.js";
import type { ApprovalHitlRequest } from "../../src/nodes/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { createSourcesServer, SOURCES_SERVER_ID } from "../../src/servers/sources/sources-server.js";
import { providerEnvFor, startFakeProviderServer } from "../../src/testing/fake-provider-server.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { publicLookup } from "../artifacts/download-harness.js";
import { makePdf } from "../fixtures/pdf/make-pdf.js";
import { arxivFakeRoutes } from "../fixtures/providers/arxiv/routes.js";
import { pdbFakeRoutes } from "../fixtures/providers/pdb/routes.js";
import { interruptsOf } from "../nodes/approval-harness.js";

/** What the injected fetch serves: two arXiv PDFs (one with a text-free page) and a PDB mmCIF file. */
const FILES: Record<string, Uint8Array> = {
  "https://arxiv.org/pdf/2403.01234v2": makePdf([
    ["Off-target prediction for base editors", "Graph neural networks score sites."],
    [],
    ["Results: validated sites rank first."],
  ]),
  "https://arxiv.org/pdf/2311.05678v1": makePdf([["A second preprint"], ["Methods follow."]]),
  "https://files.rcsb.org/download/4HHB.cif": new TextEncoder().encode("data_4HHB\n#\n_entry.id 4HHB\n"),
};
const A = "arxiv:2403.01234v2:pdf";
const B = "arxiv:2311.05678v1:pdf";
const CIF = "pdb:4HHB:cif";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * A real governance runtime over the bundled sources server (arXiv and PDB, in memory, against the
 * loopback fake providers). The candidates come from real broker calls of the prepare tools. The
 * download fetch logs `fetch <url>` when a request starts and `done <url>` when its body ends; a body
 * waits (a bounded number of event-loop turns) until `inFlight` requests have started.
 */
/** @param session the session the prepare calls run in (the graph's thread, or `default` without one) */
async function acquisitionRuntime(session = "t1", extra: Pick<GovernanceOptions, "permissions"> = {}) {
  const provider = await startFakeProviderServer({ routes: [...arxivFakeRoutes(), ...pdbFakeRoutes()] });
  const pool = createInMemoryPool({
    [SOURCES_SERVER_ID]: () =>
      createSourcesServer({ only: ["arxiv", "pdb"], env: providerEnvFor(provider.url) }),
  });
  const clock = new ManualClock(Date.parse("2026-01-02T00:00:00Z"));
  const log: string[] = [];
  const net = { inFlight: 1, started: 0 };
  const fetch: DownloadFetch = async (url) => {
    log.push(`fetch ${url}`);
    net.started += 1;
    const bytes = FILES[url];
    if (!bytes) return new Response("not found", { status: 404 });
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent) {
          log.push(`done ${url}`);
          return controller.close();
        }
        // Bounded, so a sequential implementation fails the assertion instead of hanging.
        for (let turn = 0; turn < 20_000 && net.started < net.inFlight; turn++) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        sent = true;
        controller.enqueue(bytes);
      },
    });
    return new Response(body, { headers: { "content-length": String(bytes.length) } });
  };
  const governance = await createGovernance({
    config: { servers: [] },
    mcp: { pool },
    storage: {
      dataDir: await mkdtemp(join(tmpdir(), "sciencegate-acquisition-")),
      ledger: new MemoryLedger(),
      contentStore: new MemoryContentStore(),
      grants: new MemoryGrantStore(),
    },
    clock,
    downloads: { lookup: publicLookup, fetch },
    ...extra,
  });
  cleanups.push(async () => {
    await governance.close();
    await provider.close();
  });
  /** A governed prepare call; the clock first passes arXiv's minimum interval, so no call waits. */
  const prepare = async (
    sourceId: string,
    toolId: string,
    id: string,
  ): Promise<PaperAcquisitionCandidate> => {
    await clock.advance(5_000);
    const { invocationId, result } = await governance.broker.invoke({
      sourceId,
      toolId,
      input: { id },
      sessionId: session,
    });
    return { mcpInvocationId: invocationId, candidateId: result.artifacts?.[0]?.candidateId ?? "" };
  };
  const arxiv = (id: string) => prepare("arxiv", "prepare_paper_download", id);
  const papers = [await arxiv("2403.01234v2"), await arxiv("2311.05678")];
  const transfers = () => log.filter((line) => line.startsWith("fetch ")).map((line) => line.slice(6));
  return {
    governance,
    papers,
    net,
    log,
    transfers,
    structure: () => prepare("pdb", "prepare_structure_download", "4HHB"),
  };
}

const thread = { configurable: { thread_id: "t1" } };
type Input = Parameters<PaperAcquisitionGraph["invoke"]>[0];
/** The cards of a paused run, as raised (langchain's `HITLRequest` by default, or a native card). */
const raisedOf = (values: unknown): Interrupt<ApprovalHitlRequest | PermissionCard>[] =>
  isInterrupted(values) ? (values[INTERRUPT] as Interrupt<ApprovalHitlRequest | PermissionCard>[]) : [];
/** The cards of a paused run, each as its native `PermissionCard` whatever shape it was raised in. */
const cardsOf = interruptsOf;
const cardOf = (values: unknown, candidateId: string) => {
  const found = cardsOf(values).find((card) => card.value?.args.candidateId === candidateId);
  if (!found) throw new Error(`no card for ${candidateId}`);
  return found;
};
const resume = (answers: Array<[Interrupt<PermissionCard>, unknown]>) =>
  new Command({ resume: Object.fromEntries(answers.map(([card, value]) => [card.id, value])) }) as Input;
const allowOnce = (values: unknown) =>
  resume(cardsOf(values).map((card) => [card, { decision: "allow_once" }]));
const papersOf = (values: unknown) => (values as { papers: AcquiredPaper[] }).papers;
const byCandidate = (values: unknown, candidateId: string) => {
  const paper = papersOf(values).find((p) => p.candidateId === candidateId);
  if (!paper) throw new Error(`no paper for ${candidateId}`);
  return paper;
};
const rows = async (governance: Governance, toolId: string) => governance.ledger.query({ toolId });

/** Checks an extracted paper's files: the text has one section per page, the manifest the page count. */
async function expectExtracted(paper: AcquiredPaper, pageCount: number, text: string) {
  expect(paper).toMatchObject({
    status: "extracted",
    jobId: expect.any(String),
    finalPath: expect.stringContaining("/workspace/downloads/arxiv/"),
    actualChecksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    textPath: expect.stringMatching(/papers\/.+\/fulltext\.md$/),
    manifestPath: expect.stringMatching(/papers\/.+\/manifest\.json$/),
    pageCount,
  });
  expect(paper.error).toBeUndefined();
  const fulltext = await readFile(paper.textPath as string, "utf8");
  expect(fulltext).toContain(`## Page ${pageCount}`);
  expect(fulltext).toContain(text);
  expect(JSON.parse(await readFile(paper.manifestPath as string, "utf8"))).toMatchObject({ pageCount });
}

describe("createPaperAcquisitionGraph", () => {
  test("two cards at once; one resume map downloads both in parallel, then extracts both in the next step", async () => {
    const { governance, papers, net, log, transfers } = await acquisitionRuntime();
    const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
    const paused = await graph.invoke({ candidates: papers }, thread);
    const cards = cardsOf(paused);
    expect(cards.map((card) => card.value?.args.candidateId).sort()).toEqual([B, A].sort());
    expect(new Set(cards.map((card) => card.id)).size).toBe(2);
    expect(cardOf(paused, A).value).toMatchObject({
      action: "download",
      toolId: "artifact_download",
      risk: "download",
    });
    // Raised as langchain's HITLRequest of the one download: approve or reject, no edit.
    for (const { value } of raisedOf(paused)) {
      const request: HITLRequest = value as ApprovalHitlRequest;
      expect(request.actionRequests.map((action) => action.name)).toEqual(["artifact_download"]);
      expect(request.reviewConfigs).toEqual([
        { actionName: "artifact_download", allowedDecisions: ["approve", "reject"] },
      ]);
    }
    // The cards come before any side effect: no request, no job, no row.
    expect(transfers()).toEqual([]);
    expect(await governance.downloads.list()).toEqual([]);

    net.inFlight = 2;
    const tasks: Array<{ step: number; name: string; phase: string }> = [];
    const progress: string[] = [];
    let final: unknown;
    const stream = await graph.stream(allowOnce(paused), {
      ...thread,
      streamMode: ["debug", "custom", "values"],
    });
    for await (const [mode, chunk] of stream as AsyncIterable<[string, Record<string, unknown>]>) {
      if (mode === "values") final = chunk;
      if (mode === "custom") progress.push(`${chunk.candidateId} ${chunk.status}`);
      if (mode === "debug" && (chunk.type === "task" || chunk.type === "task_result")) {
        const payload = chunk.payload as { name: string };
        tasks.push({ step: chunk.step as number, name: payload.name, phase: String(chunk.type) });
      }
    }
    // Parallel: both requests were in flight before either body finished.
    expect(log.slice(0, 2).every((line) => line.startsWith("fetch "))).toBe(true);
    expect(log.filter((line) => line.startsWith("done "))).toHaveLength(2);
    // Next step: both downloads finished before any extraction started, which all share one later step.
    const firstExtract = tasks.findIndex((t) => t.name === "extract" && t.phase === "task");
    const downloadsDone = tasks.filter((t) => t.name === "download" && t.phase === "task_result");
    expect(downloadsDone).toHaveLength(2);
    expect(
      tasks.slice(0, firstExtract).filter((t) => t.name === "download" && t.phase === "task_result"),
    ).toHaveLength(2);
    const extractSteps = new Set(tasks.filter((t) => t.name === "extract").map((t) => t.step));
    expect([...extractSteps]).toEqual([(downloadsDone[0]?.step ?? 0) + 1]);
    expect(progress).toEqual(expect.arrayContaining([`${A} completed`, `${B} completed`]));

    expect(papersOf(final).map((p) => [p.candidateId, p.status])).toEqual([
      [A, "extracted"],
      [B, "extracted"],
    ]);
    await expectExtracted(byCandidate(final, A), 3, "Off-target prediction for base editors");
    await expectExtracted(byCandidate(final, B), 2, "A second preprint");
    // B carries no licence of its own: the result's applies, with a warning.
    expect(byCandidate(final, B).warnings.join("\n")).toContain("license");
    expect((final as { warnings: string[] }).warnings.some((w) => w.startsWith(`${B}: `))).toBe(true);
    expect(await rows(governance, "artifact_download")).toHaveLength(2);
    expect(await rows(governance, "paper_extract_pdf")).toHaveLength(2);
  });

  test("an extraction the app's rule makes dangerous shows its own card after the download's; approve extracts, reject leaves the paper downloaded", async () => {
    const dangerousExtraction = {
      permissions: {
        policy: {
          isDangerous: (r: { toolId: string }) => (r.toolId === "paper_extract_pdf" ? true : undefined),
        },
      },
    };
    const run = async (answer: unknown) => {
      const { governance, papers } = await acquisitionRuntime("t1", dangerousExtraction);
      const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
      const paused = await graph.invoke({ candidates: papers.slice(0, 1) }, thread);
      expect(cardsOf(paused).map((card) => card.value?.toolId)).toEqual(["artifact_download"]);
      const second = await graph.invoke(allowOnce(paused), thread);
      const extraction = cardsOf(second);
      expect(extraction.map((card) => card.value?.toolId)).toEqual(["paper_extract_pdf"]);
      expect(await rows(governance, "paper_extract_pdf")).toEqual([]);
      const done = await graph.invoke(resume(extraction.map((card) => [card, answer])), thread);
      return { governance, paper: papersOf(done)[0] as AcquiredPaper };
    };
    const approved = await run({ decision: "allow_once" });
    await expectExtracted(approved.paper, 3, "Off-target prediction for base editors");
    expect(await rows(approved.governance, "paper_extract_pdf")).toMatchObject([{ status: "ok" }]);
    const rejected = await run({ decision: "deny" });
    expect(rejected.paper).toMatchObject({ status: "downloaded", error: { code: "PERMISSION_DENIED" } });
    expect(await rows(rejected.governance, "paper_extract_pdf")).toMatchObject([
      { status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
  });

  test("a principal resolver: that principal's always_allow covers the run, and its download and extraction rows carry it", async () => {
    const { governance, papers } = await acquisitionRuntime();
    await governance.permissions.setApprovalMode("t1", "always_allow", "p1");
    const graph = createPaperAcquisitionGraph({
      governance,
      checkpointer: new MemorySaver(),
      principal: (config) => config.configurable?.user as string | undefined,
    });
    const done = await graph.invoke(
      { candidates: papers.slice(0, 1) },
      { configurable: { thread_id: "t1", user: "p1" } },
    );
    expect(cardsOf(done)).toEqual([]);
    expect(papersOf(done).map((paper) => paper.status)).toEqual(["extracted"]);
    for (const toolId of ["artifact_download", "paper_extract_pdf"]) {
      expect(await rows(governance, toolId)).toMatchObject([{ status: "ok", principal: "p1" }]);
    }
  });

  test("deny refuses only its candidate; the other is still extracted", async () => {
    const { governance, papers, transfers } = await acquisitionRuntime();
    const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
    const paused = await graph.invoke({ candidates: papers }, thread);
    const done = await graph.invoke(
      resume([
        [cardOf(paused, A), { decision: "deny", message: "not this preprint" }],
        [cardOf(paused, B), { decision: "allow_once" }],
      ]),
      thread,
    );
    expect(cardsOf(done)).toEqual([]);
    expect(byCandidate(done, A)).toMatchObject({
      status: "denied",
      error: {
        code: "PERMISSION_DENIED",
        retryable: false,
        message: expect.stringContaining("not this preprint"),
      },
    });
    expect(byCandidate(done, A).jobId).toBeUndefined();
    expect(byCandidate(done, B).status).toBe("extracted");
    expect(transfers()).toEqual(["https://arxiv.org/pdf/2311.05678v1"]);
    expect(await rows(governance, "paper_extract_pdf")).toHaveLength(1);
  });

  test('cardFormat: "native" raises the PermissionCard itself; an HITL reject answers it too', async () => {
    const { governance, papers, transfers } = await acquisitionRuntime();
    const graph = createPaperAcquisitionGraph({
      governance,
      checkpointer: new MemorySaver(),
      cardFormat: "native",
    });
    const paused = await graph.invoke({ candidates: papers }, thread);
    expect(raisedOf(paused).map((raised) => (raised.value as PermissionCard).type)).toEqual([
      "permission",
      "permission",
    ]);
    const done = await graph.invoke(
      resume([
        [cardOf(paused, A), { decisions: [{ type: "reject", message: "not this one" }] }],
        [cardOf(paused, B), { decision: "allow_once" }],
      ]),
      thread,
    );
    expect(byCandidate(done, A).status).toBe("denied");
    expect(byCandidate(done, B).status).toBe("extracted");
    expect(transfers()).toEqual(["https://arxiv.org/pdf/2311.05678v1"]);
  });

  test("allow_matching on one card releases the other on the same resume", async () => {
    const { governance, papers, transfers } = await acquisitionRuntime();
    const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
    const paused = await graph.invoke({ candidates: papers }, thread);
    const done = await graph.invoke(resume([[cardOf(paused, B), { decision: "allow_matching" }]]), thread);
    expect(cardsOf(done)).toEqual([]);
    expect(papersOf(done).map((p) => p.status)).toEqual(["extracted", "extracted"]);
    expect(transfers().sort()).toEqual([
      "https://arxiv.org/pdf/2311.05678v1",
      "https://arxiv.org/pdf/2403.01234v2",
    ]);
    const grants = await governance.permissions.listGrants({ sessionId: "t1" });
    expect(grants.map((g) => [g.action, g.resource])).toEqual([["download", "artifact:arxiv"]]);
  });

  test("a partial resume, then the rest: each file transferred once, one ledger row per download", async () => {
    const { governance, papers, transfers } = await acquisitionRuntime();
    const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
    const paused = await graph.invoke({ candidates: papers }, thread);
    const half = await graph.invoke(resume([[cardOf(paused, A), { decision: "allow_once" }]]), thread);
    expect(cardsOf(half).map((card) => card.id)).toEqual([cardOf(paused, B).id]);
    expect(transfers()).toEqual(["https://arxiv.org/pdf/2403.01234v2"]);
    const done = await graph.invoke(resume([[cardOf(paused, B), { decision: "allow_once" }]]), thread);
    expect(papersOf(done).map((p) => p.status)).toEqual(["extracted", "extracted"]);
    expect(transfers().sort()).toEqual([
      "https://arxiv.org/pdf/2311.05678v1",
      "https://arxiv.org/pdf/2403.01234v2",
    ]);
    const downloads = await rows(governance, "artifact_download");
    expect(downloads.map((row) => row.status)).toEqual(["ok", "ok"]);
    expect(new Set(downloads.map((row) => row.toolCallId)).size).toBe(2);
    // The same candidates again in the thread replay their outcomes: no card, no transfer, no row.
    const again = await graph.invoke({ candidates: papers }, thread);
    expect(cardsOf(again)).toEqual([]);
    expect(papersOf(again)).toEqual(papersOf(done));
    expect(transfers()).toHaveLength(2);
    expect(await rows(governance, "artifact_download")).toHaveLength(2);
    expect(await governance.downloads.list()).toHaveLength(2);
  });

  test("a non-PDF candidate (a PDB mmCIF file) is downloaded but not extracted", async () => {
    const { governance, papers, structure, transfers } = await acquisitionRuntime();
    const cif = await structure();
    const graph = createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() });
    const paused = await graph.invoke({ candidates: [cif, papers[0] as PaperAcquisitionCandidate] }, thread);
    expect(cardsOf(paused)).toHaveLength(2);
    const done = await graph.invoke(allowOnce(paused), thread);
    const structureFile = byCandidate(done, CIF);
    expect(structureFile).toMatchObject({
      status: "downloaded",
      finalPath: expect.stringMatching(/4HHB\.cif$/),
    });
    expect(structureFile.textPath).toBeUndefined();
    expect(structureFile.warnings.join(" ")).toContain("Not a PDF");
    expect(await readFile(structureFile.finalPath as string, "utf8")).toContain("data_4HHB");
    expect(byCandidate(done, A).status).toBe("extracted");
    expect(transfers()).toHaveLength(2);
    // One extraction, of the arXiv record: its row is a call of the built-ins' source, its entry names the record's.
    const extractions = await rows(governance, "paper_extract_pdf");
    expect(extractions.map((row) => row.sourceId)).toEqual(["sciencegate"]);
    const entry = await governance.broker.store.getJson<{ sourceId: string }>(
      extractions[0]?.normalizedRef as string,
    );
    expect(entry.sourceId).toBe("arxiv");
  });

  test("an always_allow session shows no card; bad and unknown candidates are failed results", async () => {
    const { governance, papers } = await acquisitionRuntime();
    governance.permissions.setApprovalMode("t1", "always_allow");
    const [first] = papers as [PaperAcquisitionCandidate];
    const candidates = [
      first,
      { mcpInvocationId: first.mcpInvocationId, candidateId: "arxiv:9999.99999v1:pdf" },
      { mcpInvocationId: first.mcpInvocationId },
      first,
    ] as PaperAcquisitionCandidate[];
    const done = await createPaperAcquisitionGraph({ governance, checkpointer: new MemorySaver() }).invoke(
      { candidates },
      thread,
    );
    expect(cardsOf(done)).toEqual([]);
    expect(papersOf(done).map((p) => [p.status, p.error?.code])).toEqual([
      ["extracted", undefined],
      ["failed", "NOT_FOUND"],
      ["failed", "INVALID_INPUT"],
      ["extracted", undefined],
    ]);
    // The duplicate shared its twin's download.
    expect(papersOf(done)[3]).toEqual(papersOf(done)[0]);
    expect(await governance.downloads.list()).toHaveLength(1);
  });

  test("as a node of a parent StateGraph: the cards surface in the parent and its state receives the papers", async () => {
    const { governance, papers } = await acquisitionRuntime();
    const Parent = Annotation.Root({
      candidates: Annotation<PaperAcquisitionCandidate[]>(),
      papers: Annotation<AcquiredPaper[]>(),
      warnings: Annotation<string[]>(),
      summary: Annotation<string>(),
    });
    const parent = new StateGraph(Parent)
      .addNode("acquire", createPaperAcquisitionGraph({ governance }))
      .addNode("report", (state: typeof Parent.State) => ({
        summary: state.papers.map((p) => `${p.candidateId}=${p.status}`).join(","),
      }))
      .addEdge(START, "acquire")
      .addEdge("acquire", "report")
      .compile({ checkpointer: new MemorySaver() });
    const paused = await parent.invoke({ candidates: papers }, thread);
    expect(cardsOf(paused)).toHaveLength(2);
    const done = await parent.invoke(allowOnce(paused) as never, thread);
    expect(done.summary).toBe(`${A}=extracted,${B}=extracted`);
  });

  test("without a checkpointer the graph cannot pause: downloads are denied with a clear message", async () => {
    const { governance, papers, transfers } = await acquisitionRuntime("default");
    const done = await createPaperAcquisitionGraph({ governance }).invoke({ candidates: papers });
    expect(cardsOf(done)).toEqual([]);
    for (const paper of papersOf(done)) {
      expect(paper).toMatchObject({ status: "denied", error: { code: "PERMISSION_DENIED" } });
      expect(paper.error?.message).toContain("checkpointer"); // the broker's refusal names what lets a person answer;
    }
    expect(transfers()).toEqual([]);
    expect(await governance.downloads.list()).toEqual([]);
  });
});
