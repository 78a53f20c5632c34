/**
 * One replay rule for every tool: a `threadId:toolCallId` key replays only the very call that first
 * used it (same session, source, tool and arguments). The same key reused with other arguments, by
 * another session, or by another tool is refused the same way for the built-ins (`artifact_download`,
 * `paper_extract_pdf`) as for an MCP tool: `PERMISSION_DENIED` (`tool_call_id_reused`), nothing runs,
 * and one row of its own without the tool call id. The same id on another thread is another call.
 */
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { prepareFixedToolTable } from "../../../src/adapters/fixed-tool-table.js";
import type { DownloadFetch } from "../../../src/artifacts/download-fetch.js";
import { MemoryContentStore } from "../../../src/governance/audit/content-store.js";
import type { InvocationRecord } from "../../../src/governance/audit/ledger.js";
import { MemoryLedger } from "../../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../../src/governance/permissions/grant-store.js";
import { createGovernance, type Governance } from "../../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../../src/testing/in-memory-pool.js";
import { makeCandidate, publicLookup, recordCandidateInvocation } from "../../artifacts/download-harness.js";
import { makePdf } from "../../fixtures/pdf/make-pdf.js";
import { makeSource, makeTool } from "../manifests/manifest-factory.js";
import { demoResult } from "./broker-harness.js";

const PAPER = makePdf([["BRAF V600E in melanoma"]]);
const opened: Governance[] = [];

afterEach(async () => {
  for (const governance of opened.splice(0)) await governance.close();
});

/**
 * A runtime with an MCP source `demo` (tool `search`) and the built-ins, whose ledger holds, for
 * sessions `alice` and `bob` each, an arXiv call offering candidates `a` and `b`.
 */
async function bench() {
  const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-replay-keys-"));
  const manifestDir = await mkdtemp(join(tmpdir(), "sciencegate-replay-keys-m-"));
  await writeFile(join(manifestDir, "demo.json"), JSON.stringify(makeSource({ tools: [makeTool()] })));
  const upstream: string[] = [];
  const server = () => {
    const s = new McpServer({ name: "demo", version: "1.0.0" });
    s.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
      upstream.push(query);
      const result = demoResult("search", [query]);
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result as never,
      };
    });
    return s;
  };
  const fetches: string[] = [];
  const fetch: DownloadFetch = async (url) => {
    fetches.push(url);
    return new Response(PAPER, { headers: { "content-length": String(PAPER.length) } });
  };
  const ledger = new MemoryLedger();
  const store = new MemoryContentStore();
  const governance = await createGovernance({
    config: { servers: [] },
    manifests: {
      // The recorded candidates are arXiv's: its manifest (hosts, licence) is needed without its server.
      builtin: true,
      dirs: [manifestDir],
    },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    storage: { dataDir, ledger, contentStore: store, grants: new MemoryGrantStore() },
    downloads: { lookup: publicLookup, fetch },
  });
  opened.push(governance);
  for (const session of ["alice", "bob"]) {
    await governance.permissions.setApprovalMode(session, "always_allow");
    // Two principals of the same session (an app's users sharing one), each covered on its own.
    for (const principal of ["p1", "p2"]) {
      await governance.permissions.setApprovalMode(session, "always_allow", principal);
    }
    await recordCandidateInvocation(
      { ledgerWriter: governance.ledgerWriter, store },
      {
        invocationId: `offer-${session}`,
        sessionId: session,
        toolId: "prepare_paper_download",
        candidates: ["a", "b"].map((id) =>
          makeCandidate({
            candidateId: id,
            sourceRecordId: `2401.0000${id}`,
            url: `https://arxiv.org/pdf/${id}`,
          }),
        ),
      },
    );
  }
  // The session is the app's user, so that two sessions can share a thread.
  const table = prepareFixedToolTable({
    governance,
    artifactTools: true,
    approvalHook: false,
    sessionId: (config) => config.configurable?.user as string | undefined,
    principal: (config) => config.configurable?.principal as string | undefined,
  });
  const call = async (
    name: string,
    args: Record<string, unknown>,
    at: { user: string; thread: string; id: string; principal?: string },
  ): Promise<ToolMessage> => {
    const tool = table.find((t) => t.name === name) as StructuredToolInterface;
    return (await tool.invoke(
      { type: "tool_call", id: at.id, name, args },
      { configurable: { thread_id: at.thread, user: at.user, principal: at.principal } },
    )) as ToolMessage;
  };
  const rows = async (): Promise<InvocationRecord[]> =>
    (await ledger.query({})).filter((row) => !row.invocationId.startsWith("offer-"));
  /** Papers extracted so far (one folder per job). */
  const papers = () =>
    existsSync(join(dataDir, "papers")) ? readdirSync(join(dataDir, "papers")).length : 0;
  return { governance, call, rows, upstream, fetches, papers };
}

type Bench = Awaited<ReturnType<typeof bench>>;

/** A tool under test: its model-visible name, two different argument sets, and what counts its effects. */
interface ToolCase {
  name: string;
  /** Prepares what the calls need (a completed download to extract) and returns the two argument sets. */
  args(b: Bench): Promise<[Record<string, unknown>, Record<string, unknown>]>;
  effects(b: Bench): number;
}

/** Downloads candidate `id` for alice in its own thread, and returns the job id. */
async function download(b: Bench, id: string): Promise<string> {
  const message = await b.call(
    "artifact_download",
    { mcpInvocationId: "offer-alice", candidateId: id },
    { user: "alice", thread: `setup-${id}`, id: `setup-${id}` },
  );
  expect(message.status).not.toBe("error");
  return jobIdOf(message);
}

/** The job id a download's message names (its artifact, or the JSON of its text). */
function jobIdOf(message: ToolMessage): string {
  const artifact = message.artifact as { jobId?: string; result?: { data?: { jobId?: string } } };
  const jobId = artifact?.jobId ?? artifact?.result?.data?.jobId;
  expect(typeof jobId).toBe("string");
  return jobId as string;
}

const CASES: ToolCase[] = [
  {
    name: "mcp__demo__search",
    args: async () => [{ query: "braf" }, { query: "kras" }],
    effects: (b) => b.upstream.length,
  },
  {
    name: "artifact_download",
    args: async () => [
      { mcpInvocationId: "offer-alice", candidateId: "a" },
      { mcpInvocationId: "offer-alice", candidateId: "b" },
    ],
    effects: (b) => b.fetches.length,
  },
  {
    name: "paper_extract_pdf",
    args: async (b) => {
      const [first, second] = [await download(b, "a"), await download(b, "b")];
      return [{ artifactJobId: first }, { artifactJobId: second }];
    },
    effects: (b) => b.papers(),
  },
];

/** The refusal of a reused key, as the model reads it. */
function expectReusedKey(message: ToolMessage): void {
  expect(message.status).toBe("error");
  expect(JSON.parse(String(message.content))).toMatchObject({
    code: "PERMISSION_DENIED",
    data: { reason: "tool_call_id_reused" },
  });
}

describe.each(CASES)("one replay rule: $name", (tool) => {
  async function firstCall() {
    const b = await bench();
    const [args, otherArgs] = await tool.args(b);
    const first = await b.call(tool.name, args, { user: "alice", thread: "t1", id: "k1" });
    expect(first.status).not.toBe("error");
    return { b, args, otherArgs, first, before: await b.rows() };
  }

  test("the same call again replays its row: nothing runs, no row", async () => {
    const { b, args, first, before } = await firstCall();
    const effects = tool.effects(b);
    const again = await b.call(tool.name, args, { user: "alice", thread: "t1", id: "k1" });
    expect(again.status).toBe(first.status);
    expect(tool.effects(b)).toBe(effects);
    expect(await b.rows()).toEqual(before);
  });

  test("the same key with other arguments is refused: nothing runs, one row without the key", async () => {
    const { b, otherArgs, before } = await firstCall();
    const effects = tool.effects(b);
    expectReusedKey(await b.call(tool.name, otherArgs, { user: "alice", thread: "t1", id: "k1" }));
    expect(tool.effects(b)).toBe(effects);
    const added = (await b.rows()).slice(before.length);
    expect(added).toMatchObject([
      { sessionId: "alice", threadId: "t1", status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
    expect(added[0]?.toolCallId).toBeUndefined();
  });

  test("the same key from another session on the same thread is refused the same way", async () => {
    const { b, args, before } = await firstCall();
    const effects = tool.effects(b);
    expectReusedKey(await b.call(tool.name, args, { user: "bob", thread: "t1", id: "k1" }));
    expect(tool.effects(b)).toBe(effects);
    const added = (await b.rows()).slice(before.length);
    expect(added).toMatchObject([
      { sessionId: "bob", threadId: "t1", status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
    expect(added[0]?.toolCallId).toBeUndefined();
  });

  test("the same key by another principal of the same session is refused the same way", async () => {
    const b = await bench();
    const [args] = await tool.args(b);
    const first = await b.call(tool.name, args, { user: "alice", thread: "t1", id: "k1", principal: "p1" });
    expect(first.status, String(first.content)).not.toBe("error");
    const before = await b.rows();
    const effects = tool.effects(b);
    expectReusedKey(
      await b.call(tool.name, args, { user: "alice", thread: "t1", id: "k1", principal: "p2" }),
    );
    expect(tool.effects(b)).toBe(effects);
    const added = (await b.rows()).slice(before.length);
    expect(added).toMatchObject([
      { sessionId: "alice", principal: "p2", status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
    expect(added[0]?.toolCallId).toBeUndefined();
  });

  test("the same id on another thread is another call: it runs, with a row under its own key", async () => {
    const { b, args, before } = await firstCall();
    const other = await b.call(tool.name, args, { user: "alice", thread: "t2", id: "k1" });
    // Its outcome is its own (a second download of one file is refused: downloads never overwrite).
    if (other.status === "error") {
      expect(JSON.parse(String(other.content)).data?.reason).not.toBe("tool_call_id_reused");
    }
    const added = (await b.rows()).slice(before.length);
    expect(added).toMatchObject([{ sessionId: "alice", threadId: "t2", toolCallId: "k1" }]);
  });

  test("a key another tool used first is refused the same way: nothing runs, one row without the key", async () => {
    const b = await bench();
    const [args] = await tool.args(b);
    const otherTool = tool.name === "mcp__demo__search" ? "artifact_download" : "mcp__demo__search";
    const otherArgs =
      otherTool === "mcp__demo__search"
        ? { query: "braf" }
        : { mcpInvocationId: "offer-alice", candidateId: "a" };
    const first = await b.call(otherTool, otherArgs, { user: "alice", thread: "t1", id: "k1" });
    expect(first.status).not.toBe("error");
    const before = await b.rows();
    const effects = tool.effects(b);
    expectReusedKey(await b.call(tool.name, args, { user: "alice", thread: "t1", id: "k1" }));
    expect(tool.effects(b)).toBe(effects);
    const added = (await b.rows()).slice(before.length);
    expect(added).toMatchObject([
      { sessionId: "alice", status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
    expect(added[0]?.toolCallId).toBeUndefined();
  });
});

describe("one replay rule: a call running under its key", () => {
  test("artifact_download: a concurrent call with the same key and other arguments is refused, not joined", async () => {
    const b = await bench();
    const at = { user: "alice", thread: "t1", id: "k1" };
    const [first, second] = await Promise.all([
      b.call("artifact_download", { mcpInvocationId: "offer-alice", candidateId: "a" }, at),
      b.call("artifact_download", { mcpInvocationId: "offer-alice", candidateId: "b" }, at),
    ]);
    // Which of the two claims the key first is up to the scheduler: exactly one runs, the other is refused.
    const [winner, loser, url] =
      first.status === "error"
        ? [second, first, "https://arxiv.org/pdf/b"]
        : [first, second, "https://arxiv.org/pdf/a"];
    expect(winner.status, String(winner.content)).not.toBe("error");
    expectReusedKey(loser);
    expect(b.fetches).toEqual([url]);
    const rows = await b.rows();
    expect(rows.filter((row) => row.toolCallId === "k1")).toHaveLength(1);
    expect(rows.filter((row) => row.error?.code === "PERMISSION_DENIED")).toHaveLength(1);
  });
});
