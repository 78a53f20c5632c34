/**
 * The governed agent of examples/langgraph-server served by the real LangGraph API dev server and
 * driven over HTTP by `@langchain/langgraph-sdk`, as Studio or Agent Chat UI drive it: parallel
 * approval cards as the thread's interrupts (langchain's HITL shape), resumed by interrupt id, download
 * progress on the `custom` stream mode, promoted tools kept by a later run, one governance runtime per
 * server process, closed (every ledger row committed, stores closed) when the server is told to stop.
 * The tests run in order on one thread.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, type Interrupt } from "@langchain/langgraph-sdk";
import type { ApprovalHitlRequest } from "sciencegate";
import { SqliteLedger } from "sciencegate/governance";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type DevServer, startDevServer } from "./langgraph-dev-server.js";

const appDir = resolve(import.meta.dirname, "../../examples/langgraph-server");
const GRAPH = "sciencegate";
const QUESTION =
  "Find PubMed literature on CRISPR base editing, and read the arXiv preprint 2403.01234 in full";

interface ApiMessage {
  type: string;
  content: unknown;
  name?: string;
  tool_call_id?: string;
  status?: string;
  tool_calls?: Array<{ id: string; name: string }>;
}
interface ApiState {
  messages: ApiMessage[];
  promotion: { promoted: Record<string, unknown> };
}
interface ProgressEvent {
  type: string;
  status: string;
  bytesDownloaded: number;
}

let home: string;
let server: DevServer | undefined;
let client: Client;
let threadId: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "sciencegate-langgraph-home-"));
  server = await startDevServer({ appDir, env: { SCIENCEGATE_HOME: home } });
  client = new Client({ apiUrl: server.url });
  threadId = (await client.threads.create()).thread_id;
}, 180_000);

afterAll(async () => {
  await server?.stop("SIGKILL", 5_000);
  if (server) rmSync(server.workDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}, 30_000);

/** Streams one run (`updates` and `custom`) to its end or its pause; returns the custom events. */
async function streamRun(payload: { input?: unknown; command?: { resume: unknown } }): Promise<unknown[]> {
  const custom: unknown[] = [];
  const stream = client.runs.stream(threadId, GRAPH, {
    ...(payload.input === undefined ? {} : { input: payload.input as Record<string, unknown> }),
    ...(payload.command === undefined ? {} : { command: payload.command }),
    streamMode: ["updates", "custom"],
  });
  for await (const chunk of stream) {
    if (chunk.event === "error") throw new Error(`run failed: ${JSON.stringify(chunk.data)}`);
    if (chunk.event === "custom") custom.push(chunk.data);
  }
  return custom;
}

async function threadState(): Promise<{ values: ApiState; interrupts: Interrupt<ApprovalHitlRequest>[] }> {
  const state = await client.threads.getState<ApiState>(threadId);
  const interrupts = state.tasks.flatMap((task) => task.interrupts ?? []) as Interrupt<ApprovalHitlRequest>[];
  return { values: state.values, interrupts };
}

function toolMessage(messages: ApiMessage[], name: string): ApiMessage | undefined {
  return messages.filter((m) => m.type === "tool" && m.name === name).at(-1);
}

function text(message: ApiMessage | undefined): string {
  return typeof message?.content === "string" ? message.content : JSON.stringify(message?.content);
}

let cards: Interrupt<ApprovalHitlRequest>[] = [];

test("two dangerous calls of one model turn pause the run with two HITL cards", async () => {
  await streamRun({ input: { messages: [{ role: "user", content: QUESTION }] } });
  cards = (await threadState()).interrupts;
  expect(cards).toHaveLength(2);
  const names = cards.map((card) => card.value?.actionRequests[0]?.name).sort();
  expect(names).toEqual(["mcp__europe-pmc__search", "mcp__pubmed__search"]);
  for (const card of cards) {
    expect(card.id).toMatch(/\S/);
    expect(card.value?.reviewConfigs[0]?.allowedDecisions).toEqual(["approve", "edit", "reject"]);
    expect(card.value?.actionRequests[0]?.args).toMatchObject({ query: "crispr base editing" });
    expect(card.value?.sciencegate).toMatchObject({ type: "permission", risk: "read" });
  }
}, 120_000);

test("a resume map by interrupt id approves one card and rejects the other; the download card follows", async () => {
  const byName = (name: string) => cards.find((card) => card.value?.actionRequests[0]?.name === name)?.id;
  const pubmed = byName("mcp__pubmed__search");
  const europePmc = byName("mcp__europe-pmc__search");
  if (!pubmed || !europePmc) throw new Error("the cards of the first pause are missing");
  await streamRun({
    command: {
      resume: {
        [pubmed]: { decisions: [{ type: "approve" }] },
        [europePmc]: { decisions: [{ type: "reject", message: "Not Europe PMC today." }] },
      },
    },
  });
  const { values, interrupts } = await threadState();
  expect(toolMessage(values.messages, "mcp__pubmed__search")?.status).not.toBe("error");
  const refused = toolMessage(values.messages, "mcp__europe-pmc__search");
  expect(refused?.status).toBe("error");
  expect(text(refused)).toContain("PERMISSION_DENIED");
  expect(text(refused)).toContain("Not Europe PMC today.");
  expect(interrupts).toHaveLength(1);
  expect(interrupts[0]?.value?.actionRequests[0]?.name).toBe("artifact_download");
  expect(interrupts[0]?.value?.reviewConfigs[0]?.allowedDecisions).toEqual(["approve", "reject"]);
  cards = interrupts;
}, 120_000);

test("the approved download streams its progress on the custom stream mode", async () => {
  const [download] = cards;
  if (!download?.id) throw new Error("no download card");
  const custom = await streamRun({
    command: { resume: { [download.id]: { decisions: [{ type: "approve" }] } } },
  });
  const progress = custom.filter(
    (event): event is ProgressEvent => (event as ProgressEvent).type === "artifact_download_progress",
  );
  expect(progress.filter((event) => event.status === "running").length).toBeGreaterThan(1);
  expect(progress.at(-1)?.status).toBe("completed");
  const bytes = progress.map((event) => event.bytesDownloaded);
  expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
  expect(bytes.at(-1)).toBeGreaterThan(0);
  const { values, interrupts } = await threadState();
  expect(interrupts).toEqual([]);
  const answer = text(values.messages.at(-1));
  expect(answer).toMatch(/\[PMID:\d+\]/);
  expect(answer).toContain("Its full text was read: 4 pages");
  expect(answer).not.toContain("Europe PMC");
}, 120_000);

test("a second run on the thread calls a tool promoted in the first, without tool_search", async () => {
  await streamRun({ input: { messages: [{ role: "user", content: "Look that preprint up again." }] } });
  const { values, interrupts } = await threadState();
  expect(interrupts).toEqual([]);
  const humans = values.messages.flatMap((m, i) => (m.type === "human" ? [i] : []));
  const secondTurn = values.messages.slice(humans[1]);
  expect(secondTurn.some((m) => m.type === "tool" && m.name === "tool_search")).toBe(false);
  const lookup = toolMessage(secondTurn, "mcp__arxiv__lookup");
  expect(lookup?.status).not.toBe("error");
  expect(text(values.messages.at(-1))).toContain("[arXiv:2403.01234v2]");
  expect(Object.keys(values.promotion.promoted)).toContain("mcp__arxiv__lookup");
}, 120_000);

test("the server process runs one governance runtime, whatever the number of runs", () => {
  const sourcesServers = server?.processes().filter((p) => /\bserve sources\b/.test(p.args)) ?? [];
  expect(sourcesServers).toHaveLength(1);
});

test("SIGTERM closes the governance before the server exits; the ledger has a row per call", async () => {
  const { values } = await threadState();
  // The server's process alone, as a container stop does (see `stopServer` for why not the group).
  const stopped = await server?.stopServer("SIGTERM", 20_000);
  expect(stopped, server?.log()).toBe(true);
  expect(server?.log()).not.toContain("closing governance failed");
  // Closed SQLite databases leave no write-ahead log behind; a process that exited mid-close would.
  expect(readdirSync(home).filter((name) => name.endsWith("-wal"))).toEqual([]);
  const ledger = await SqliteLedger.open(join(home, "ledger.sqlite"));
  try {
    const calls = values.messages.filter((m) => m.type === "tool" && m.name !== "tool_search");
    expect(calls.map((m) => m.name)).toEqual([
      "mcp__pubmed__search",
      "mcp__europe-pmc__search",
      "mcp__arxiv__lookup",
      "mcp__arxiv__prepare_paper_download",
      "artifact_download",
      "paper_extract_pdf",
      "mcp__arxiv__lookup",
    ]);
    for (const message of calls) {
      const row = await ledger.findByCall(threadId, message.tool_call_id ?? "");
      expect(row, `${message.name} ${message.tool_call_id}`).toBeDefined();
      expect(row?.status).toBe(message.status === "error" ? "error" : "ok");
    }
    const denied = await ledger.findByCall(
      threadId,
      toolMessage(values.messages, "mcp__europe-pmc__search")?.tool_call_id ?? "",
    );
    expect(denied?.error?.code).toBe("PERMISSION_DENIED");
  } finally {
    await ledger.close();
  }
  expect(existsSync(join(home, "ledger.sqlite"))).toBe(true);
}, 60_000);
