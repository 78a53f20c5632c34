import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, interrupt, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterEach, describe, expect, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { prepareFixedToolTable } from "../../src/adapters/fixed-tool-table.js";
import {
  type GovernanceMiddlewareOptions,
  governanceMiddleware,
} from "../../src/adapters/governance-middleware.js";
import type { InvokeOutcome } from "../../src/governance/broker/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import type { PromotionState } from "../../src/visibility/promotion.js";
import { THREAD_ID_CASES } from "../core/thread-id-cases.js";
import { createDemoGovernance, type DemoCounters } from "../nodes/governed-test-runtime.js";
import { RecordingModel } from "./recording-model.js";

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

const appCalls: string[] = [];
const appTool = tool(
  async ({ text }) => {
    appCalls.push(text);
    return `app:${text}`;
  },
  { name: "echo_app", description: "The app's own tool.", schema: z.object({ text: z.string() }) },
);

function agentFor(
  g: Governance,
  model: RecordingModel,
  options: Omit<GovernanceMiddlewareOptions, "governance"> = {},
) {
  return createAgent({
    model,
    tools: [appTool],
    middleware: [governanceMiddleware({ governance: g, ...options })],
    checkpointer: new MemorySaver(),
  });
}

const deferredSection = (system: string) =>
  system.slice(system.indexOf("<available-deferred-tools>"), system.indexOf("</available-deferred-tools>"));
/** A token counter under which any line naming a demo tool is over budget. */
const namesCostAThousand = (text: string) => (text.includes("mcp__demo__") ? 1_000 : 1);
const config = (thread: string) => ({ configurable: { thread_id: thread } });
const user = (content: string) => ({ messages: [{ role: "user", content }] });
const toolMessages = (messages: BaseMessage[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
const systemText = (model: RecordingModel, call: number) => model.calls[call]?.messages[0]?.text ?? "";

describe("governanceMiddleware with createAgent", () => {
  test("tool_search select: binds the schema on the next turn, then the governed call runs through the broker", async () => {
    const { governance: g, counters } = await setup();
    const model = new RecordingModel()
      .respondWithTools([{ id: "c1", name: "tool_search", args: { query: "select:mcp__demo__search" } }])
      .respondWithTools([{ id: "c2", name: "mcp__demo__search", args: { query: "brca1" } }])
      .respond(new AIMessage("done"));
    const result = await agentFor(g, model).invoke(user("find papers"), config("t1"));

    expect(model.bound[0]?.names.sort()).toEqual(["echo_app", "tool_search"]);
    expect(systemText(model, 0)).toContain("<available-deferred-tools>");
    expect(systemText(model, 0)).toContain("mcp__demo__search:");
    expect(model.bound[1]?.names).toContain("mcp__demo__search");
    expect(model.bound[1]?.schemas.mcp__demo__search).toMatchObject({
      properties: { query: { type: "string" } },
    });
    expect(systemText(model, 1)).not.toContain("mcp__demo__search:");
    expect(systemText(model, 1)).toContain("mcp__demo__lookup:");

    const [search, call] = toolMessages(result.messages);
    expect(JSON.parse(search?.content as string).results[0].name).toBe("mcp__demo__search");
    expect(call?.status).not.toBe("error");
    expect((call?.artifact as InvokeOutcome | undefined)?.result).toMatchObject({
      sourceId: "demo",
      untrusted: true,
    });
    expect(call?.content).toMatch(/^mcpInvocationId: /);
    expect(counters.calls.search).toBe(1);
    const rows = await g.ledger.query();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ sourceId: "demo", toolId: "search", threadId: "t1", toolCallId: "c2" });
    expect(result.promotion.promoted).toHaveProperty("mcp__demo__search");
    // createAgent infers the middleware's state: typed promotions and messages, not `any`.
    expectTypeOf(result.promotion).toEqualTypeOf<PromotionState>();
    expectTypeOf(result.messages).not.toBeAny();
    expectTypeOf(result.messages).items.toExtend<BaseMessage>();
  });

  test("deferredTools.tokenBudget and countTokens reach the section; a bad budget fails when the middleware is made", async () => {
    const { governance: g } = await setup();
    const model = new RecordingModel().respond(new AIMessage("ok"));
    await agentFor(g, model, { deferredTools: { tokenBudget: 500, countTokens: namesCostAThousand } }).invoke(
      user("hello"),
      config("t-budget"),
    );
    expect(systemText(model, 0)).toContain("- demo: 2 tools.");
    expect(deferredSection(systemText(model, 0))).not.toContain("mcp__demo__lookup");
    expect(() => governanceMiddleware({ governance: g, deferredTools: { tokenBudget: -1 } })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG" }),
    );
  });

  test("a deferred tool called before tool_search is refused and nothing runs", async () => {
    const { governance: g, counters } = await setup();
    const model = new RecordingModel()
      .respondWithTools([{ id: "c1", name: "mcp__demo__lookup", args: { query: "x" } }])
      .respond(new AIMessage("ok"));
    const result = await agentFor(g, model).invoke(user("hello"), config("t1"));
    const [refusal] = toolMessages(result.messages);
    expect(refusal?.status).toBe("error");
    expect(JSON.parse(refusal?.content as string)).toMatchObject({
      code: "TOOL_UNAVAILABLE",
      retryable: true,
      data: { reason: "not_promoted" },
    });
    expect(counters.calls.lookup).toBeUndefined();
    // Nothing ran, and the refusal the model saw is audited.
    expect(await g.ledger.query()).toMatchObject([
      {
        status: "error",
        toolId: "lookup",
        threadId: "t1",
        toolCallId: "c1",
        attempts: 0,
        error: { code: "TOOL_UNAVAILABLE" },
      },
    ]);
  });

  test("the app's own tools pass through to the agent's handler and bypass the broker", async () => {
    const { governance: g } = await setup();
    appCalls.length = 0;
    const model = new RecordingModel()
      .respondWithTools([{ id: "c1", name: "echo_app", args: { text: "hi" } }])
      .respond(new AIMessage("ok"));
    const result = await agentFor(g, model).invoke(user("hello"), config("t1"));
    expect(toolMessages(result.messages)[0]?.content).toBe("app:hi");
    expect(appCalls).toEqual(["hi"]);
    expect(await g.ledger.query()).toHaveLength(0);
  });

  test("keywords in the user message promote prefer tools before the first model call", async () => {
    const { governance: g } = await setup();
    const model = new RecordingModel().respond(new AIMessage("ok"));
    await agentFor(g, model).invoke(user("run a demo query"), config("t1"));
    expect(model.bound[0]?.names).toContain("mcp__demo__search");
    expect(model.bound[0]?.names).not.toContain("mcp__demo__lookup");
    expect(systemText(model, 0)).not.toContain("mcp__demo__search:");
  });

  test("two parallel tool_search calls of one turn both promote", async () => {
    const { governance: g } = await setup();
    const model = new RecordingModel()
      .respondWithTools([
        { id: "c1", name: "tool_search", args: { query: "select:mcp__demo__search" } },
        { id: "c2", name: "tool_search", args: { query: "select:mcp__demo__lookup" } },
      ])
      .respond(new AIMessage("ok"));
    const result = await agentFor(g, model).invoke(user("hello"), config("t1"));
    expect(model.bound[1]?.names).toEqual(expect.arrayContaining(["mcp__demo__search", "mcp__demo__lookup"]));
    expect(Object.keys(result.promotion.promoted).sort()).toEqual(["mcp__demo__lookup", "mcp__demo__search"]);
  });

  test("promotions survive an interrupt and its resume (same run)", async () => {
    const { governance: g } = await setup();
    const ask = tool(async () => String(interrupt("approve?")), {
      name: "ask_human",
      description: "Asks a human.",
      schema: z.object({}),
    });
    const model = new RecordingModel()
      .respondWithTools([{ id: "c1", name: "tool_search", args: { query: "select:mcp__demo__search" } }])
      .respondWithTools([{ id: "c2", name: "ask_human", args: {} }])
      .respond(new AIMessage("ok"));
    const agent = createAgent({
      model,
      tools: [ask],
      middleware: [governanceMiddleware({ governance: g })],
      checkpointer: new MemorySaver(),
    });
    const paused = await agent.invoke(user("hello"), config("t1"));
    expect(paused.__interrupt__).toHaveLength(1);
    const resumed = await agent.invoke(new Command({ resume: "yes" }), config("t1"));
    expect(toolMessages(resumed.messages).at(-1)?.content).toBe("yes");
    expect(model.bound[2]?.names).toContain("mcp__demo__search");
  });

  test.each([
    { scope: "run" as const, keptOnNextTurn: false },
    { scope: "thread" as const, keptOnNextTurn: true },
  ])(
    "promotionScope $scope: kept on the next user turn = $keptOnNextTurn",
    async ({ scope, keptOnNextTurn }) => {
      const { governance: g } = await setup();
      const model = new RecordingModel()
        .respondWithTools([{ id: "c1", name: "tool_search", args: { query: "select:mcp__demo__search" } }])
        .respond(new AIMessage("first"))
        .respond(new AIMessage("second"));
      const agent = agentFor(g, model, { promotionScope: scope });
      await agent.invoke(user("hello"), config("t1"));
      expect(model.bound[1]?.names).toContain("mcp__demo__search");
      await agent.invoke(user("and again"), config("t1"));
      expect(model.bound[2]?.names.includes("mcp__demo__search")).toBe(keptOnNextTurn);
    },
  );

  test.each(THREAD_ID_CASES)(
    "thread_id $given: the middleware and the fixed tool table agree on thread $threadId",
    async ({ given, sessionId, threadId }) => {
      const { governance: g } = await setup();
      const config = { configurable: given === undefined ? {} : { thread_id: given } };
      const model = new RecordingModel()
        .respondWithTools([{ id: "c1", name: "tool_search", args: { query: "select:mcp__demo__search" } }])
        .respondWithTools([{ id: "c2", name: "mcp__demo__search", args: { query: "brca1" } }])
        .respond(new AIMessage("done"));
      // No checkpointer: LangGraph's savers refuse a run without a thread.
      const agent = createAgent({ model, middleware: [governanceMiddleware({ governance: g })] });
      await agent.invoke(user("find papers"), config);
      const search = prepareFixedToolTable({ governance: g })[1];
      await search?.invoke(
        { type: "tool_call", id: "c3", name: "mcp__demo__search", args: { query: "tp53" } },
        config,
      );

      const byCall = async (toolCallId: string) =>
        (await g.ledger.query()).find((r) => r.toolCallId === toolCallId);
      const middleware = await byCall("c2");
      const table = await byCall("c3");
      expect({ sessionId: middleware?.sessionId, threadId: middleware?.threadId }).toEqual({
        sessionId,
        threadId,
      });
      // The table reads the session and the thread of each call from its config by the same rule.
      expect({ sessionId: table?.sessionId, threadId: table?.threadId }).toEqual({ sessionId, threadId });
    },
  );
});
