import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { effectsFile } from "../mcp/upstream-fixture.js";
import { answer, RecordingChatModel } from "../nodes/recording-chat-model.js";
import { oneCallModel, upstreamGovernance } from "./upstream-input-executors.js";

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

const replyOf = (messages: BaseMessage[]) =>
  messages.find((m) => (m as ToolMessage).tool_call_id === "call-1") as ToolMessage | undefined;

async function runOnce(tool: string, args: Record<string, unknown>, thread: string) {
  if (!governance) throw new Error("no runtime");
  await governance.permissions.setApprovalMode(thread, "always_allow");
  const agent = createGovernedAgent({
    model: oneCallModel(tool, args),
    governance,
    checkpointer: new MemorySaver(),
  });
  const custom: unknown[] = [];
  let messages: BaseMessage[] = [];
  const stream = await agent.stream(
    { messages: [new HumanMessage("go")] },
    { configurable: { thread_id: thread }, streamMode: ["custom", "values"] },
  );
  for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
    if (mode === "custom") custom.push(chunk);
    else messages = (chunk as { messages: BaseMessage[] }).messages;
  }
  return { custom, reply: replyOf(messages) };
}

describe.each(["2025-11-25", "2026-07-28"] as const)("on %s", (protocol) => {
  test("the server's progress and log messages are the tool task's custom stream events", async () => {
    governance = await upstreamGovernance({ protocol, effects: effectsFile().path });
    const { custom, reply } = await runOnce("progress", { steps: 3 }, "p1");
    expect(String(reply?.content)).toContain("done after 3 steps");
    const progress = custom.filter((event) => (event as { type?: string }).type === "upstream_progress");
    const logs = custom.filter((event) => (event as { type?: string }).type === "upstream_log");
    expect(progress).toEqual(
      [1, 2, 3].map((step) => ({
        type: "upstream_progress",
        toolCallId: "call-1",
        name: "mcp__up__progress",
        progress: step,
        total: 3,
        message: `step ${step}`,
      })),
    );
    expect(logs).toEqual(
      [1, 2, 3].map((step) => ({
        type: "upstream_log",
        toolCallId: "call-1",
        name: "mcp__up__progress",
        level: "info",
        logger: "fixture",
        data: `working on step ${step}`,
      })),
    );
  });

  test("without a model, a sampling request is refused with an error naming the option", async () => {
    governance = await upstreamGovernance({ protocol, effects: effectsFile().path });
    const { reply } = await runOnce("summarize", { text: "a long text" }, "s1");
    expect(reply?.status).toBe("error");
    expect(String(reply?.content)).toMatch(/sampling/);
    const rows = await governance.ledger.listAuthorizations({ sessionId: "s1" });
    expect(rows.filter((row) => row.action === "sampling")).toEqual([]);
  });

  test("with a model, the model answers the sampling request, and the exchange is recorded", async () => {
    const model = new RecordingChatModel([answer("a short text")]);
    governance = await upstreamGovernance({ protocol, effects: effectsFile().path, samplingModel: model });
    const { reply } = await runOnce("summarize", { text: "a long text" }, "s2");
    expect(String(reply?.content)).toContain("summary from RecordingChatModel: a short text");
    expect(model.turns).toHaveLength(1);
    expect(model.turns[0]?.system).toBe("You summarize.");
    expect(model.turns[0]?.messages.at(-1)?.text).toBe("Summarize: a long text");
    const rows = (await governance.ledger.listAuthorizations({ sessionId: "s2" })).filter(
      (row) => row.action === "sampling",
    );
    expect(rows.map((row) => [row.decisionSource, row.toolCallId, row.sourceId, row.toolId])).toEqual([
      ["sampling_model", "call-1", "up", "summarize"],
    ]);
    const exchange = await governance.store.getJson<{ request: unknown; response: unknown }>(
      rows[0]?.resource ?? "",
    );
    expect(exchange).toMatchObject({
      request: { maxTokens: 100, systemPrompt: "You summarize." },
      response: {
        model: "RecordingChatModel",
        role: "assistant",
        content: { type: "text", text: "a short text" },
      },
    });
  });
});
