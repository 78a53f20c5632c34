import { HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { createModelNode } from "../../src/nodes/model-node.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createDemoGovernance, type DemoCounters } from "./governed-test-runtime.js";
import { createGraphTestRuntime, type GraphTestRuntime } from "./graph-test-runtime.js";
import { answer, callTools, RecordingChatModel } from "./recording-chat-model.js";

let open: Governance | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function demo(): Promise<{ governance: Governance; counters: DemoCounters }> {
  const built = await createDemoGovernance();
  open = built.governance;
  return built;
}

async function steerable(): Promise<GraphTestRuntime> {
  const built = await createGraphTestRuntime();
  open = built.governance;
  return built;
}

const deferredSection = (system: string) =>
  system.slice(system.indexOf("<available-deferred-tools>"), system.indexOf("</available-deferred-tools>"));
/** A token counter under which any line naming a demo tool is over budget. */
const namesCostAThousand = (text: string) => (text.includes("mcp__demo__") ? 1_000 : 1);
const thread = (id: string) => ({ configurable: { thread_id: id } });
const toolMessages = (messages: unknown[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
/** An error message's JSON body, or a result message's full result (its `artifact`, for code). */
const body = (message: ToolMessage | undefined) =>
  message?.status === "error"
    ? JSON.parse(String(message.content))
    : (message?.artifact as { result: unknown } | undefined)?.result;

describe("createGovernedAgent: deferred tools and promotion", () => {
  test("a call to a hidden deferred tool is refused with a search-first error and nothing executes", async () => {
    const { governance, counters } = await demo();
    const model = fakeModel()
      .respondWithTools([{ name: "mcp__demo__lookup", args: { query: "brca1" }, id: "hidden-1" }])
      .respond(answer("I will search first."));
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance,
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: [new HumanMessage("brca1 please")] }, thread("t-hidden"));
    const [refusal] = toolMessages(result.messages);
    expect(refusal?.status).toBe("error");
    expect(refusal?.tool_call_id).toBe("hidden-1");
    expect(body(refusal)).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      retryable: true,
      data: { reason: "not_promoted" },
    });
    expect(counters.calls.lookup).toBeUndefined();
    expect(await governance.ledger.query()).toMatchObject([
      {
        status: "error",
        toolId: "lookup",
        threadId: "t-hidden",
        toolCallId: "hidden-1",
        error: { code: "TOOL_UNAVAILABLE" },
      },
    ]);
  });

  test("tool_search select: promotes, the schema is bound on the next turn and the call then runs", async () => {
    const { governance, counters } = await demo();
    const model = new RecordingChatModel([
      callTools({ name: "tool_search", args: { query: "select:mcp__demo__lookup" } }),
      callTools({ name: "mcp__demo__lookup", args: { query: "brca1" } }),
      answer("done"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance,
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: [new HumanMessage("find brca1")] }, thread("t-select"));
    expect(model.toolNames(0)).toEqual(["tool_search"]);
    expect(model.toolNames(1)).toEqual(["tool_search", "mcp__demo__lookup"]);
    const bound = model.turns[1]?.tools.find((t) => t.name === "mcp__demo__lookup");
    expect(bound?.parameters).toEqual(governance.surface.get("t-select", "mcp__demo__lookup")?.inputSchema);
    expect(bound?.parameters).toMatchObject({
      properties: { query: { type: "string" } },
      required: ["query"],
    });
    // The catalog section stops listing what is loaded.
    expect(model.turns[0]?.system).toContain("mcp__demo__lookup:");
    expect(model.turns[1]?.system).not.toContain("mcp__demo__lookup:");
    expect(body(toolMessages(result.messages)[1])).toMatchObject({ sourceId: "demo", toolId: "lookup" });
    expect(counters.calls.lookup).toBe(1);
    expect(Object.keys(result.promotion.promoted)).toEqual(["mcp__demo__lookup"]);
  });

  test("keyword auto-promotion: a user who says 'demo' gets mcp__demo__search bound on the first call", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([answer("ok")]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance,
      systemPrompt: "You are a careful assistant.",
    });
    const result = await agent.invoke({ messages: [new HumanMessage("Show me the demo records")] });
    expect(model.toolNames(0)).toEqual(["tool_search", "mcp__demo__search"]);
    const system = model.turns[0]?.system ?? "";
    expect(system.startsWith("You are a careful assistant.")).toBe(true);
    expect(system).toContain("<available-deferred-tools>");
    expect(system).toContain("mcp__demo__lookup:");
    expect(system).not.toContain("mcp__demo__search:");
    expect(system).toContain("- lookup -> mcp__demo__lookup");
    expect(Object.keys(result.promotion.promoted)).toEqual(["mcp__demo__search"]);
  });

  test("no keyword, no auto-promotion: only tool_search is bound", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([answer("ok")]);
    const agent = createGovernedAgent({ artifactTools: false, model, governance });
    await agent.invoke({ messages: [new HumanMessage("demonstrate something")] });
    expect(model.toolNames(0)).toEqual(["tool_search"]);
  });

  test("two parallel tool_search calls in one turn both promote", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([
      callTools(
        { name: "tool_search", args: { query: "select:mcp__demo__search" } },
        { name: "tool_search", args: { query: "select:mcp__demo__lookup" } },
      ),
      answer("both loaded"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance,
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: [new HumanMessage("x")] }, thread("t-parallel-search"));
    expect(model.toolNames(1).sort()).toEqual(["mcp__demo__lookup", "mcp__demo__search", "tool_search"]);
    expect(Object.keys(result.promotion.promoted).sort()).toEqual(["mcp__demo__lookup", "mcp__demo__search"]);
  });

  test.each([
    { scope: "run" as const, boundOnSecondTurn: ["tool_search"] },
    { scope: "thread" as const, boundOnSecondTurn: ["tool_search", "mcp__demo__lookup"] },
  ])(
    "a new user turn with promotionScope $scope binds $boundOnSecondTurn",
    async ({ scope, boundOnSecondTurn }) => {
      const { governance } = await demo();
      const model = new RecordingChatModel([
        callTools({ name: "tool_search", args: { query: "select:mcp__demo__lookup" } }),
        answer("loaded"),
        answer("second turn"),
      ]);
      const agent = createGovernedAgent({
        artifactTools: false,
        model,
        governance,
        checkpointer: new MemorySaver(),
        promotionScope: scope,
      });
      await agent.invoke({ messages: [new HumanMessage("first")] }, thread(`t-scope-${scope}`));
      expect(model.toolNames(1)).toContain("mcp__demo__lookup");
      await agent.invoke({ messages: [new HumanMessage("second")] }, thread(`t-scope-${scope}`));
      expect(model.toolNames(2)).toEqual(boundOnSecondTurn);
    },
  );

  test("a changed tool definition is flagged, unbound and refused until it is searched again", async () => {
    const runtime = await steerable();
    const model = new RecordingChatModel([
      callTools({ name: "tool_search", args: { query: "select:mcp__demo__lookup" } }),
      async () => {
        await runtime.changeDescription("lookup", "The lookup tool, now with other semantics.");
        return callTools({ name: "mcp__demo__lookup", args: { query: "a" } });
      },
      callTools({ name: "tool_search", args: { query: "select:mcp__demo__lookup" } }),
      callTools({ name: "mcp__demo__lookup", args: { query: "b" } }),
      answer("done"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: runtime.governance,
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: [new HumanMessage("x")] }, thread("t-stale"));
    const [, refused, , ran] = toolMessages(result.messages);
    expect(body(refused)).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      retryable: true,
      data: { reason: "stale" },
    });
    expect(model.turns[2]?.system).toContain("<mcp_changed_tools>");
    expect(model.turns[2]?.system).toContain("- mcp__demo__lookup:");
    expect(model.toolNames(2)).toEqual(["tool_search"]);
    expect(model.toolNames(3)).toEqual(["tool_search", "mcp__demo__lookup"]);
    expect(model.turns[3]?.system).not.toContain("<mcp_changed_tools>");
    expect(ran?.status).not.toBe("error");
    expect(runtime.calls.lookup).toBe(1);
  });
});

describe("createModelNode", () => {
  test("an app's own system message is merged with the governance sections into one", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([answer("ok")]);
    const node = createModelNode({ model, governance });
    await node(
      {
        messages: [
          new SystemMessage({ content: "App rules.", id: "s" }),
          new HumanMessage({ content: "hi", id: "h" }),
        ],
        promotion: { promoted: {} },
        runId: undefined,
      },
      thread("t-sys"),
    );
    const sent = model.turns[0]?.messages ?? [];
    expect(sent.filter((m) => m.type === "system")).toHaveLength(1);
    expect(sent[0]?.text.startsWith("App rules.\n\n<available-deferred-tools>")).toBe(true);
  });

  test("deferredTools.tokenBudget and countTokens reach the section: over budget it lists sources, not tools", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([answer("ok")]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance,
      deferredTools: { tokenBudget: 500, countTokens: namesCostAThousand },
    });
    await agent.invoke({ messages: [new HumanMessage("hello")] }, thread("t-budget"));
    const system = model.turns[0]?.system ?? "";
    expect(system).toContain("- demo: 2 tools.");
    expect(deferredSection(system)).not.toContain("mcp__demo__lookup");
    expect(() => createModelNode({ model, governance, deferredTools: { tokenBudget: 0 } })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG" }),
    );
  });

  test("a model without bindTools is a configuration error", async () => {
    const { governance } = await demo();
    const model = new RecordingChatModel([]);
    Object.defineProperty(model, "bindTools", { value: undefined });
    expect(() => createModelNode({ model, governance })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG" }),
    );
  });
});
