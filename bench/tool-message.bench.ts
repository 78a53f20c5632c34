/**
 * Tool-message tokens (o200k): what the model reads for the same calls through `@langchain/mcp-adapters`
 * and through Sciencegate's governed tool node, side by side in one run. Calls: `read_text_file` of an
 * 800-token file on the real stdio `@modelcontextprotocol/server-filesystem`, and a few bundled science
 * sources on the loopback fake providers (the sources server in memory for the adapters, as a stdio
 * child for the broker). Also the whole-envelope JSON the governed message carried before (`envelope
 * JSON`), for the before/after per record.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { loadMcpTools, MultiServerMCPClient } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { allFakeRoutes } from "../examples/demo/offline-providers.js";
import { executeGovernedToolCall } from "../src/nodes/execute-tool-call.js";
import { createGovernance, type Governance } from "../src/runtime/create-governance.js";
import { createSourcesServer } from "../src/servers/sources/sources-server.js";
import { providerEnvFor, startFakeProviderServer } from "../src/testing/fake-provider-server.js";
import { promote, promotionReducer } from "../src/visibility/promotion.js";
import { type BenchMetric, type BenchResult, metricWithTarget, ratioOf } from "./lib/bench-result.js";

const encoder = new Tiktoken(o200kBase);
const tokens = (text: string) => encoder.encode(text).length;

const FILE_TOKENS = 800;
/** Target of the file read: the text once plus a short provenance line. */
const TARGET_FILE_READ_TOKENS = 900;
const FILESYSTEM_SERVER = new URL(
  "../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
  import.meta.url,
).pathname;

/** Science-source calls measured; arguments as the demo and the tests use them on the fake providers. */
const SCIENCE_CALLS: { sourceId: string; toolId: string; args: Record<string, unknown> }[] = [
  { sourceId: "pubmed", toolId: "search", args: { query: "crispr base editing", max_results: 3 } },
  { sourceId: "pubmed", toolId: "fetch_abstracts", args: { pmids: ["22000011"] } },
  { sourceId: "europe-pmc", toolId: "search", args: { query: "crispr base editing" } },
  { sourceId: "arxiv", toolId: "prepare_paper_download", args: { id: "2403.01234" } },
  { sourceId: "uniprot", toolId: "lookup", args: { accessions: ["P15056"] } },
  { sourceId: "pdb", toolId: "prepare_structure_download", args: { id: "4HHB", format: "cif" } },
];

/** The text a provider receives for a tool message: its string, or its content blocks' text and JSON. */
function messageText(message: BaseMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) =>
      block.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block),
    )
    .join("\n");
}

/** Deterministic prose of exactly `count` o200k tokens (a file a model might read). */
function proseOfTokens(count: number): string {
  const words = ["governed", "tool", "calls", "cite", "their", "sources", "and", "keep", "every", "record"];
  let text = "";
  for (let i = 0; tokens(text) < count + 8; i++) {
    text += `${words[(i * 7) % words.length]}${i % 12 === 11 ? ".\n" : " "}`;
  }
  return encoder.decode(encoder.encode(text).slice(0, count));
}

async function governedCall(
  governance: Governance,
  name: string,
  args: Record<string, unknown>,
): Promise<{ text: string; envelopeJson: string; records: number }> {
  const tools = governance.tools("bench");
  const promotion = promotionReducer(undefined, promote([name], tools));
  const { message } = await executeGovernedToolCall(
    governance,
    { id: `bench-${name}`, name, args },
    { sessionId: "bench", threadId: "bench", promotion },
  );
  if (message.status === "error") throw new Error(`${name} failed: ${messageText(message)}`);
  const outcome = message.artifact as { invocationId: string; result: { records: unknown[] } };
  return {
    text: messageText(message),
    envelopeJson: JSON.stringify({ invocationId: outcome.invocationId, ...outcome.result }),
    records: outcome.result.records.length,
  };
}

async function adapterCall(tool: StructuredToolInterface, args: Record<string, unknown>): Promise<string> {
  const message = (await tool.invoke({
    type: "tool_call",
    id: "peer",
    name: tool.name,
    args,
  })) as BaseMessage;
  return messageText(message);
}

/**
 * Runs the measurement.
 * @returns tokens per call for adapters, governed before (envelope JSON) and now, and ratios
 */
export async function run(): Promise<BenchResult> {
  const dir = await mkdtemp(join(tmpdir(), "sciencegate-bench-msg-"));
  const file = join(dir, "notes.txt");
  await writeFile(file, proseOfTokens(FILE_TOKENS));
  const provider = await startFakeProviderServer({ routes: await allFakeRoutes() });
  const env = providerEnvFor(provider.url);
  const peer = new MultiServerMCPClient({
    mcpServers: {
      filesystem: { transport: "stdio", command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
    },
  });
  const sources = createSourcesServer({ env });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sourcesClient = new Client({ name: "bench-peer", version: "1.0.0" });
  await Promise.all([sources.connect(serverSide), sourcesClient.connect(clientSide)]);
  const governance = await createGovernance({
    config: {
      mcpServers: { filesystem: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] } },
    },
    storage: { dataDir: join(dir, "data-fs") },
    permissions: {
      // Token counts only: every call is allowed (the derived filesystem tools ask a human otherwise).
      authorize: () => ({ allowed: true }),
    },
  });
  // No config: the bundled science sources, pointed at the fake providers.
  const science = await createGovernance({
    env: { ...process.env, ...env },
    storage: { dataDir: join(dir, "data") },
  });
  const metrics: BenchMetric[] = [];
  const ratios = [];
  const notes: string[] = [];
  try {
    const peerRead = (await peer.getTools()).find((t) => t.name.endsWith("read_text_file"));
    if (!peerRead) throw new Error("server-filesystem offers no read_text_file");
    const adapters = tokens(await adapterCall(peerRead, { path: file }));
    const ours = await governedCall(governance, "mcp__filesystem__read_text_file", { path: file });
    metrics.push(
      { name: "read_text_file (800-token file): adapters", value: adapters, unit: "tokens" },
      {
        name: "read_text_file: governed, envelope JSON (before)",
        value: tokens(ours.envelopeJson),
        unit: "tokens",
      },
      metricWithTarget(
        "read_text_file: governed tool message",
        tokens(ours.text),
        "tokens",
        TARGET_FILE_READ_TOKENS,
      ),
    );
    ratios.push(ratioOf("read_text_file tokens: governed / adapters", tokens(ours.text), adapters, "tokens"));

    const peerTools = await loadMcpTools("sources", sourcesClient);
    let sum = { adapters: 0, before: 0, now: 0, records: 0 };
    for (const call of SCIENCE_CALLS) {
      const name = `${call.sourceId}_${call.toolId}`;
      const tool = peerTools.find((t) => t.name === name || t.name.endsWith(`__${name}`));
      if (!tool) throw new Error(`the sources server offers no ${name}`);
      const peerTokens = tokens(await adapterCall(tool, call.args));
      const governed = await governedCall(science, `mcp__${call.sourceId}__${call.toolId}`, call.args);
      const [before, now] = [tokens(governed.envelopeJson), tokens(governed.text)];
      sum = {
        adapters: sum.adapters + peerTokens,
        before: sum.before + before,
        now: sum.now + now,
        records: sum.records + governed.records,
      };
      notes.push(
        `${call.sourceId}/${call.toolId}: ${governed.records} record(s); adapters ${peerTokens}, envelope JSON ${before}, governed now ${now} tokens`,
      );
    }
    const perRecord = (total: number) => Math.round(total / sum.records);
    metrics.push(
      { name: "science sources per record: adapters", value: perRecord(sum.adapters), unit: "tokens" },
      {
        name: "science sources per record: envelope JSON (before)",
        value: perRecord(sum.before),
        unit: "tokens",
      },
      { name: "science sources per record: governed now", value: perRecord(sum.now), unit: "tokens" },
    );
    ratios.push(
      ratioOf("science-source tokens: governed now / adapters", sum.now, sum.adapters, "tokens"),
      ratioOf("science-source tokens: governed now / envelope JSON before", sum.now, sum.before, "tokens"),
    );
  } finally {
    await governance.close();
    await science.close();
    await peer.close();
    await sourcesClient.close();
    await sources.close();
    await provider.close();
    await rm(dir, { recursive: true, force: true });
  }
  return {
    name: "tool-message",
    description:
      "o200k tokens of the tool message the model reads, governed against @langchain/mcp-adapters, same calls",
    parameters: { fileTokens: FILE_TOKENS, scienceCalls: SCIENCE_CALLS.length },
    metrics,
    ratios,
    notes,
  };
}
