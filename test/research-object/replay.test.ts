/**
 * Replay: the offline demo's agent graph runs once against the fake providers, its session is exported,
 * the providers are shut down, and the same graph runs again against the crate alone. Every governed
 * call is answered with the recorded raw bytes (same content addresses), the download with the crate's
 * copy, the tool messages and the final answer are the same, and a call the crate did not record (or
 * holds only by hash) is refused with `NOT_RECORDED`.
 */
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_SYSTEM_PROMPT } from "../../examples/demo/agent-step.js";
import { answerCards } from "../../examples/demo/approval-prompt.js";
import {
  createOfflinePaperFetch,
  demoPaperPdf,
  offlineLookup,
} from "../../examples/demo/offline-paper-fetch.js";
import { startOfflineProviders } from "../../examples/demo/offline-providers.js";
import { DEMO_QUESTION, paperAgentScript } from "../../examples/demo/paper-agent-script.js";
import { runAgent } from "../../examples/demo/run-agent.js";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { sha256Hex } from "../../src/core/canonical-json.js";
import { isGovernanceError } from "../../src/core/errors.js";
import type { CrateEntity } from "../../src/research-object/crate-graph.js";
import {
  createReplayGovernance,
  exportResearchObject,
  type ReplayGovernance,
  type ResearchObject,
  writeResearchObject,
} from "../../src/research-object/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { startReferenceWikiServer } from "../../src/testing/reference-wiki-server.js";
import { ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";

const THREAD = "agent-demo";
const policy = {
  isDangerous: (call: { sourceId: string }) => (call.sourceId === "europe-pmc" ? true : undefined),
};
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-ro-replay-"));
const crateDir = join(scratch, "crate");
const tourCrateDir = join(scratch, "tour-crate");

/** What one run of the demo's graph produced. */
interface GraphRun {
  messages: BaseMessage[];
  answer: string;
}

/** The demo's agent graph (scripted model, the demo's prompt), cards answered as the demo does. */
async function runDemoGraph(governance: Governance): Promise<GraphRun> {
  const agent = createGovernedAgent({
    model: new ScriptedChatModel(paperAgentScript, "demo"),
    governance,
    systemPrompt: DEMO_SYSTEM_PROMPT,
    checkpointer: new MemorySaver(),
  });
  const messages: BaseMessage[] = [];
  const state = await runAgent({
    agent,
    threadId: THREAD,
    input: { messages: [new HumanMessage(DEMO_QUESTION)] },
    onMessage: (message) => {
      messages.push(message);
    },
    onProgress: () => undefined,
    answer: (cards) => answerCards(cards, { interactive: false, write: () => undefined }),
  });
  return { messages, answer: state.messages.at(-1)?.text ?? "" };
}

let original: GraphRun;
let crate: ResearchObject;
let providerRequests: () => number;
let paperRequests: () => number;
let originalDataDir: string;

beforeAll(async () => {
  const providers = await startOfflineProviders();
  const wiki = await startReferenceWikiServer({ pagesDir: join(import.meta.dirname, "../fixtures/wiki") });
  const paperFetch = createOfflinePaperFetch({ host: "arxiv.org", body: demoPaperPdf(), chunks: 4 });
  originalDataDir = join(scratch, "original");
  const governance = await createGovernance({
    env: { ...process.env, ...providers.env, SCIENCE_AGENT_LLM_WIKI_URL: wiki.origin },
    storage: { dataDir: originalDataDir },
    downloads: { lookup: offlineLookup, fetch: paperFetch },
    permissions: { policy: policy },
    onWarning: () => undefined,
  });
  try {
    // Another session fills the cache first, as the demo's broker tour does: the agent's arXiv calls are
    // then cache hits, whose raw answers the crate keeps from the calls that filled the cache.
    await governance.broker.invoke({
      sourceId: "arxiv",
      toolId: "lookup",
      input: { ids: ["arXiv:2403.01234"] },
      sessionId: "demo",
    });
    await governance.broker.invoke({
      sourceId: "arxiv",
      toolId: "prepare_paper_download",
      input: { id: "2403.01234" },
      sessionId: "demo",
    });
    await governance.sessions.enableSource("demo", "llm-wiki");
    await governance.permissions.setApprovalMode("demo", "always_allow");
    await governance.broker.invoke({
      sourceId: "llm-wiki",
      toolId: "search",
      input: { query: "base editing" },
      sessionId: "demo",
    });
    original = await runDemoGraph(governance);
    crate = await exportResearchObject({ governance, sessionId: THREAD, answer: original.answer });
    await writeResearchObject(crate, crateDir);
    await writeResearchObject(await exportResearchObject({ governance, sessionId: "demo" }), tourCrateDir);
  } finally {
    await governance.close();
    await providers.server.close();
    await wiki.close();
  }
  providerRequests = () => providers.server.requests.length;
  paperRequests = () => paperFetch.requests.length;
}, 180_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

/**
 * A tool message as the model read it, with the run's own ids (invocations, jobs, plans) numbered in
 * order of appearance and the run's data directory named <data>: what differs between two runs of
 * one graph by construction.
 */
function comparable(messages: readonly BaseMessage[], dataDir: string): string[] {
  const ids = new Map<string, string>();
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  return messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) =>
      `${message.name} ${message.status ?? "success"}\n${message.text}`
        .replaceAll(dataDir, "<data>")
        .replace(uuid, (id) => {
          if (!ids.has(id)) ids.set(id, `<id ${ids.size + 1}>`);
          return ids.get(id) as string;
        }),
    );
}

describe("replaying the demo's graph from its research object", () => {
  let replay: ReplayGovernance;
  let replayed: GraphRun;
  let replayDataDir: string;
  beforeAll(async () => {
    const before = [providerRequests(), paperRequests()];
    replayDataDir = join(scratch, "replay");
    replay = await createReplayGovernance({
      crate: crateDir,
      storage: { dataDir: replayDataDir },
      permissions: { policy: policy },
    });
    replayed = await runDemoGraph(replay);
    // The providers are shut down; nothing more reached them or the paper host.
    expect([providerRequests(), paperRequests()]).toEqual(before);
  }, 120_000);
  afterAll(() => replay?.close());

  test("gives the same tool messages and the same final answer", () => {
    expect(replayed.answer).toBe(original.answer);
    expect(replayed.answer).toMatch(/\[PMID:39000001\][\s\S]*Its full text was read: 4 pages/);
    const want = comparable(original.messages, originalDataDir);
    expect(want.length).toBeGreaterThanOrEqual(7);
    expect(comparable(replayed.messages, replayDataDir)).toEqual(want);
  });

  test("answers every governed call with the recorded raw bytes (the same content address)", async () => {
    const graph = crate.metadata["@graph"];
    const recordedRaw = (name: string) => {
      const action = graph.find((e) => e["@type"] === "CreateAction" && e.name === name) as CrateEntity;
      const raw = (action.rawResult ?? action.cachedRawResult) as { "@id": string };
      return `sha256:${graph.find((e) => e["@id"] === raw["@id"])?.sha256}`;
    };
    const rows = await replay.ledger.query({ sessionId: THREAD });
    for (const name of [
      "pubmed/search",
      "europe-pmc/search",
      "arxiv/lookup",
      "arxiv/prepare_paper_download",
    ]) {
      const row = rows.find((r) => `${r.sourceId}/${r.toolId}` === name);
      expect(row?.status, name).toBe("ok");
      expect(row?.rawRef, name).toBe(recordedRaw(name));
    }
    expect(replay.replay.events.map((e) => [e.tool, e.refused])).toEqual([
      ["pubmed_search", undefined],
      ["europe-pmc_search", undefined],
      ["arxiv_lookup", undefined],
      ["arxiv_prepare_paper_download", undefined],
    ]);
    // The download came from the crate's copy (same SHA-256), and was extracted again to the same text.
    const download = rows.find((r) => r.toolId === "artifact_download");
    const entry = await replay.store.getJson<{ actualChecksum: string }>(download?.normalizedRef as string);
    const pdf = graph.find((e) => e.encodingFormat === "application/pdf");
    expect(entry.actualChecksum).toBe(`sha256:${pdf?.sha256}`);
    expect(rows.find((r) => r.toolId === "paper_extract_pdf")?.status).toBe("ok");
  });

  test("refuses a call the crate did not record, and audits the refusal", async () => {
    const refusal = await replay.broker
      .invoke({ sourceId: "pubmed", toolId: "search", input: { query: "prime editing" }, sessionId: THREAD })
      .catch((error: unknown) => error);
    expect(isGovernanceError(refusal) && refusal.code).toBe("NOT_RECORDED");
    expect((refusal as Error).message).toMatch(
      /Replay: the research object recorded no call of 'pubmed_search' on 'sciencegate-sources' with these arguments .*nothing was sent anywhere/,
    );
    const [row] = await replay.ledger.query({ sessionId: THREAD, errorCode: "NOT_RECORDED" });
    expect(row).toMatchObject({ sourceId: "pubmed", toolId: "search", status: "error" });
    expect(replay.replay.events.at(-1)).toMatchObject({ tool: "pubmed_search", refused: "not_recorded" });
  });
});

describe("replaying a crate whose calls are referenced only", () => {
  test("a private source's call is refused: the crate holds its answer by hash only", async () => {
    const replay = await createReplayGovernance({ crate: tourCrateDir });
    try {
      await replay.sessions.enableSource("demo", "llm-wiki");
      await replay.permissions.setApprovalMode("demo", "always_allow");
      const refusal = await replay.broker
        .invoke({
          sourceId: "llm-wiki",
          toolId: "search",
          input: { query: "base editing" },
          sessionId: "demo",
        })
        .catch((error: unknown) => error);
      expect(isGovernanceError(refusal) && refusal.code).toBe("NOT_RECORDED");
      expect((refusal as { data?: unknown }).data).toMatchObject({ reason: "withheld" });
      expect((refusal as Error).message).toMatch(
        /only by its hash: Referenced, not copied: source 'llm-wiki' is private/,
      );
      // The cached arXiv lookup of the same crate replays.
      const lookup = await replay.broker.invoke({
        sourceId: "arxiv",
        toolId: "lookup",
        input: { ids: ["arXiv:2403.01234"] },
        sessionId: "demo",
      });
      expect(lookup.result.records[0]?.identifier).toBe("2403.01234");
    } finally {
      await replay.close();
    }
  });
});

describe("a hostile crate", () => {
  test("a manifest whose id is a path is not written outside the replay's folder", async () => {
    const hostile = join(scratch, "hostile-crate");
    await cp(crateDir, hostile, { recursive: true });
    // A manifest of the crate claims the id "../../escaped", with its hash updated so it still verifies.
    const path = "manifests/pdb.json";
    const manifest = JSON.parse(await readFile(join(hostile, path), "utf8"));
    const bytes = Buffer.from(JSON.stringify({ ...manifest, id: "../../escaped" }));
    await writeFile(join(hostile, path), bytes);
    const metadataPath = join(hostile, "ro-crate-metadata.json");
    const metadata = JSON.parse(await readFile(metadataPath, "utf8")) as { "@graph": CrateEntity[] };
    const entity = metadata["@graph"].find((e) => e["@id"] === path) as CrateEntity;
    Object.assign(entity, { sha256: sha256Hex(bytes), contentSize: String(bytes.byteLength) });
    await writeFile(metadataPath, JSON.stringify(metadata));
    const dataDir = join(scratch, "hostile", "replay", "data");
    const replay = await createReplayGovernance({ crate: hostile, storage: { dataDir } }).catch(
      (error: unknown) => error,
    );
    if (!(replay instanceof Error)) await (replay as ReplayGovernance).close();
    expect(existsSync(join(dataDir, "escaped.json"))).toBe(false);
    expect(existsSync(join(scratch, "hostile", "replay", "escaped.json"))).toBe(false);
    expect(replay).not.toBeInstanceOf(Error);
  });
});
