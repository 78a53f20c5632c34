import { AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createHandoffTool, createSwarm } from "@langchain/langgraph-swarm";
import { afterEach, describe, expect, test } from "vitest";
import { prepareFixedToolTable } from "../../src/adapters/fixed-tool-table.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createDemoGovernance, type DemoCounters } from "../nodes/governed-test-runtime.js";

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

async function setup(): Promise<{ governance: Governance; counters: DemoCounters }> {
  const built = await createDemoGovernance();
  governance = built.governance;
  return built;
}

/** An AI turn with an explicit id: two fake models in one graph would otherwise reuse ids. */
function turn(
  id: string,
  calls: { id: string; name: string; args: Record<string, unknown> }[],
  content = "",
) {
  return new AIMessage({ id, content, tool_calls: calls.map((c) => ({ ...c, type: "tool_call" as const })) });
}

describe("prepareFixedToolTable", () => {
  test("holds tool_search and every deferred tool a session starts with, with their schemas", async () => {
    const { governance: g } = await setup();
    const table = prepareFixedToolTable({ governance: g });
    // The demo source offers no download (no artifact-plan tool): no artifact built-ins.
    expect(table.map((t) => t.name)).toEqual(["tool_search", "mcp__demo__search", "mcp__demo__lookup"]);
    expect(table[1]?.schema).toMatchObject({ properties: { query: { type: "string" } } });
    expect(table[0]?.schema).toMatchObject({ properties: { query: {}, max_results: {} } });
  });

  test("a source switched off for one session is refused for that session only; the table stays whole", async () => {
    const { governance: g, counters } = await setup();
    g.sessions.disableSource("t-off", "demo");
    const table = prepareFixedToolTable({ governance: g });
    expect(table.map((t) => t.name)).toContain("mcp__demo__search");
    const search = table.find((t) => t.name === "mcp__demo__search");
    const callIn = async (thread: string, id: string) =>
      (await search?.invoke(
        { type: "tool_call", id, name: "mcp__demo__search", args: { query: "brca1" } },
        { configurable: { thread_id: thread } },
      )) as ToolMessage;
    const off = await callIn("t-off", "c1");
    expect(off.status).toBe("error");
    expect(JSON.parse(off.content as string)).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      data: { reason: "unknown_tool" },
    });
    expect((await callIn("t-on", "c2")).status).not.toBe("error");
    expect(counters.calls.search).toBe(1);
    const rows = await g.ledger.query();
    expect(rows.map((r) => [r.sessionId, r.toolCallId, r.status]).sort()).toEqual([
      ["t-off", "c1", "error"],
      ["t-on", "c2", "ok"],
    ]);
  });

  test("artifact built-ins: by default only when a source can offer a download; artifactTools: true adds them anyway", async () => {
    const { governance: g } = await setup();
    expect(prepareFixedToolTable({ governance: g, artifactTools: true }).map((t) => t.name)).toEqual([
      "tool_search",
      "mcp__demo__search",
      "mcp__demo__lookup",
      "artifact_download",
      "paper_extract_pdf",
    ]);
  });

  test("given a session id instead of options (the old signature), it refuses and says why", async () => {
    const { governance: g } = await setup();
    const build = prepareFixedToolTable as (governance: unknown, options: unknown) => unknown;
    expect(() => build(g, "swarm-session")).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message: expect.stringContaining("no longer built for one session"),
      }),
    );
  });

  test("bad input reaches the broker: a structured INVALID_INPUT and a ledger row, not a LangChain schema throw", async () => {
    const { governance: g, counters } = await setup();
    const search = prepareFixedToolTable({ governance: g })[1];
    const message = (await search?.invoke(
      { type: "tool_call", id: "c1", name: "mcp__demo__search", args: { limit: "x" } },
      { configurable: { thread_id: "t1" } },
    )) as ToolMessage;
    expect(message.status).toBe("error");
    expect(JSON.parse(message.content as string)).toMatchObject({ code: "INVALID_INPUT", retryable: false });
    expect(counters.calls.search).toBeUndefined();
    expect(await g.ledger.query()).toMatchObject([{ toolCallId: "c1", threadId: "t1", status: "error" }]);
  });

  test("a tool whose definition changed after the table was built needs tool_search again in that session, then runs", async () => {
    const { governance: g, counters } = await setup();
    let changed = false;
    const runtime = {
      broker: g.broker,
      tools: (session: string) =>
        changed
          ? g.tools(session).map((t) => ({ ...t, definitionHash: `${t.definitionHash}-v2` }))
          : g.tools(session),
    };
    const [toolSearch, search] = prepareFixedToolTable({ governance: runtime });
    changed = true;
    const callSearch = async (id: string) =>
      (await search?.invoke(
        { type: "tool_call", id, name: "mcp__demo__search", args: { query: "brca1" } },
        { configurable: { thread_id: "t1" } },
      )) as ToolMessage;
    expect(JSON.parse((await callSearch("c1")).content as string)).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      retryable: true,
      data: { reason: "stale" },
    });
    expect(counters.calls.search).toBeUndefined();
    await toolSearch?.invoke(
      { type: "tool_call", id: "c2", name: "tool_search", args: { query: "select:mcp__demo__search" } },
      { configurable: { thread_id: "t1" } },
    );
    expect((await callSearch("c3")).status).not.toBe("error");
    expect(counters.calls.search).toBe(1);
    // The promotion belongs to t1's session: another thread still searches first.
    const elsewhere = (await search?.invoke(
      { type: "tool_call", id: "c4", name: "mcp__demo__search", args: { query: "brca1" } },
      { configurable: { thread_id: "t2" } },
    )) as ToolMessage;
    expect(JSON.parse(elsewhere.content as string)).toMatchObject({ data: { reason: "stale" } });
    expect(counters.calls.search).toBe(1);
  });

  test("a swarm of two agents: each calls a different governed tool, both calls land in the ledger", async () => {
    const { governance: g, counters } = await setup();
    const researcherModel = fakeModel()
      .respond(turn("researcher-1", [{ id: "r1", name: "mcp__demo__search", args: { query: "brca1" } }]))
      .respond(turn("researcher-2", [{ id: "r2", name: "transfer_to_curator", args: {} }]));
    const curatorModel = fakeModel()
      .respond(turn("curator-1", [{ id: "k1", name: "mcp__demo__lookup", args: { query: "p38" } }]))
      .respond(turn("curator-2", [], "Both sources checked."));
    const researcher = createReactAgent({
      llm: researcherModel,
      tools: [...prepareFixedToolTable({ governance: g }), createHandoffTool({ agentName: "curator" })],
      name: "researcher",
    });
    const curator = createReactAgent({
      llm: curatorModel,
      tools: [...prepareFixedToolTable({ governance: g }), createHandoffTool({ agentName: "researcher" })],
      name: "curator",
    });
    const swarm = createSwarm({ agents: [researcher, curator], defaultActiveAgent: "researcher" }).compile({
      checkpointer: new MemorySaver(),
    });
    const result = await swarm.invoke(
      { messages: [new HumanMessage("check brca1 and p38")] },
      { configurable: { thread_id: "swarm-1" } },
    );

    expect(result.activeAgent).toBe("curator");
    expect(result.messages.at(-1)?.content).toBe("Both sources checked.");
    expect(counters.calls).toEqual({ search: 1, lookup: 1 });
    const rows = await g.ledger.query();
    expect(rows.map((r) => [r.toolId, r.toolCallId, r.threadId, r.status]).sort()).toEqual([
      ["lookup", "k1", "swarm-1", "ok"],
      ["search", "r1", "swarm-1", "ok"],
    ]);
  });
});
