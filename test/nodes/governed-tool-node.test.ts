import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  Command,
  INTERRUPT,
  type Interrupt,
  interrupt,
  isInterrupted,
  MemorySaver,
} from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { createArtifactDownloadTool } from "../../src/artifacts/artifact-download-tool.js";
import type { ApprovalHook, ApprovalRequest } from "../../src/nodes/approval-hook.js";
import { createGovernedToolNode } from "../../src/nodes/governed-tool-node.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createBench, PDF } from "../artifacts/download-harness.js";
import { THREAD_ID_CASES } from "../core/thread-id-cases.js";
import { createGraphTestRuntime, type GraphTestRuntime } from "./graph-test-runtime.js";
import { answer, callTools, RecordingChatModel } from "./recording-chat-model.js";

let open: Governance | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function runtime(): Promise<GraphTestRuntime> {
  const built = await createGraphTestRuntime();
  open = built.governance;
  return built;
}

const thread = (id: string) => ({ configurable: { thread_id: id } });
const toolMessages = (messages: unknown[]) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
/** An error message's JSON body, or a result message's full result (its `artifact`, for code). */
const body = (message: ToolMessage | undefined) =>
  message?.status === "error"
    ? JSON.parse(String(message.content))
    : (message?.artifact as { result: unknown } | undefined)?.result;
const interruptsOf = (values: unknown): Interrupt[] => (isInterrupted(values) ? values[INTERRUPT] : []);
const select = (...names: string[]) =>
  callTools({ name: "tool_search", args: { query: `select:${names.join(",")}` } });

describe("governed tool node", () => {
  // A bounded timeout: run one after the other, the first call would wait at its gate forever.
  test("parallel MCP calls run concurrently and their results come back in the model's order", {
    timeout: 5_000,
  }, async () => {
    const rt = await runtime();
    const calls = callTools(
      { name: "mcp__demo__slow", args: { query: "first" } },
      { name: "mcp__demo__slow", args: { query: "second" } },
    );
    const model = new RecordingChatModel([select("mcp__demo__slow"), calls, answer("done")]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      checkpointer: new MemorySaver(),
    });
    const running = agent.invoke({ messages: [new HumanMessage("go")] }, thread("t-slow"));
    // Both calls wait at their gates at once: they run concurrently, not one after the other.
    await rt.waitingSlowCalls(2);
    rt.release("second");
    rt.release("first");
    const result = await running;
    const results = toolMessages(result.messages).slice(1);
    expect(results.map((m) => m.tool_call_id)).toEqual(calls.tool_calls?.map((c) => c.id));
    expect(results.map((m) => body(m).records[0].identifier)).toEqual(["first", "second"]);
    expect(rt.finished[0]).toBe("second");
  });

  test("one failing call never cancels the others of the same turn", async () => {
    const rt = await runtime();
    const model = new RecordingChatModel([
      select("mcp__demo__search"),
      callTools(
        { name: "mcp__demo__search", args: { limit: "many" } },
        { name: "mcp__demo__search", args: { query: "ok" } },
        { name: "mcp__nowhere__tool", args: {} },
      ),
      answer("done"),
    ]);
    const agent = createGovernedAgent({ artifactTools: false, model, governance: rt.governance });
    const result = await agent.invoke({ messages: [new HumanMessage("go")] });
    const [invalid, ok, unknown] = toolMessages(result.messages).slice(1);
    expect(invalid?.status).toBe("error");
    expect(body(invalid)).toMatchObject({ code: "INVALID_INPUT", retryable: false });
    expect(ok?.status).not.toBe("error");
    expect(body(ok).records[0].identifier).toBe("ok");
    expect(body(unknown)).toMatchObject({ code: "TOOL_UNAVAILABLE", data: { reason: "unknown_tool" } });
    expect(rt.calls.search).toBe(1);
  });

  test("promotion survives an approval interrupt; the resumed call runs once", async () => {
    const rt = await runtime();
    const asked: ApprovalRequest[] = [];
    const approvalHook: ApprovalHook = (request) => {
      asked.push(request);
      const answer = interrupt({ tool: request.name, args: request.args });
      return answer === "allow" ? { allowed: true } : { allowed: false, reason: "the user said no" };
    };
    const model = new RecordingChatModel([
      select("mcp__demo__lookup"),
      callTools({ name: "mcp__demo__lookup", args: { query: "brca1" } }),
      answer("done"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      checkpointer: new MemorySaver(),
      approvalHook,
    });
    const paused = await agent.invoke({ messages: [new HumanMessage("find brca1")] }, thread("t-approve"));
    expect(interruptsOf(paused)[0]?.value).toEqual({ tool: "mcp__demo__lookup", args: { query: "brca1" } });
    expect(rt.calls.lookup).toBeUndefined();
    expect(Object.keys(paused.promotion.promoted)).toEqual(["mcp__demo__lookup"]);
    const resumed = await agent.invoke(new Command({ resume: "allow" }), thread("t-approve"));
    expect(rt.calls.lookup).toBe(1);
    expect(body(toolMessages(resumed.messages)[1]).records[0].identifier).toBe("brca1");
    // The same run: the loaded tool is still bound after the resume.
    expect(model.toolNames(2)).toContain("mcp__demo__lookup");
    expect(Object.keys(resumed.promotion.promoted)).toEqual(["mcp__demo__lookup"]);
    // tool_search is never put to the approval hook.
    expect(asked.every((r) => r.name === "mcp__demo__lookup" && r.threadId === "t-approve")).toBe(true);
    expect(await rt.governance.ledger.query()).toHaveLength(1);
  });

  test("parallel approvals interrupt independently and resume with a map of answers", async () => {
    const rt = await runtime();
    const approvalHook: ApprovalHook = (request) =>
      interrupt(request.args.query) === "allow" ? { allowed: true } : { allowed: false, reason: "denied" };
    const model = new RecordingChatModel([
      select("mcp__demo__search"),
      callTools(
        { name: "mcp__demo__search", args: { query: "yes" } },
        { name: "mcp__demo__search", args: { query: "no" } },
      ),
      answer("done"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      checkpointer: new MemorySaver(),
      approvalHook,
    });
    const paused = await agent.invoke({ messages: [new HumanMessage("go")] }, thread("t-map"));
    const interrupts = interruptsOf(paused);
    expect(interrupts.map((i) => i.value).sort()).toEqual(["no", "yes"]);
    const answers = Object.fromEntries(interrupts.map((i) => [i.id, i.value === "yes" ? "allow" : "deny"]));
    const resumed = await agent.invoke(new Command({ resume: answers }), thread("t-map"));
    const [allowed, denied] = toolMessages(resumed.messages).slice(1);
    expect(body(allowed).records[0].identifier).toBe("yes");
    expect(denied?.status).toBe("error");
    expect(body(denied)).toMatchObject({ code: "PERMISSION_DENIED", retryable: false });
    expect(rt.calls.search).toBe(1);
  });

  test.each([
    { name: "a denial", hook: (() => ({ allowed: false, reason: "policy" })) as ApprovalHook },
    {
      name: "a hook that throws",
      hook: (() => {
        throw new Error("grant store down");
      }) as ApprovalHook,
    },
  ])("$name becomes PERMISSION_DENIED and nothing executes", async ({ hook }) => {
    const rt = await runtime();
    const model = new RecordingChatModel([
      select("mcp__demo__search"),
      callTools({ name: "mcp__demo__search", args: { query: "x" } }),
      answer("done"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      approvalHook: hook,
    });
    const result = await agent.invoke({ messages: [new HumanMessage("go")] });
    expect(body(toolMessages(result.messages)[1])).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(rt.calls.search).toBeUndefined();
  });

  test("the app's own tools are always bound and run without approval", async () => {
    const rt = await runtime();
    let asked = 0;
    const add = tool(async ({ a, b }) => String(a + b), {
      name: "add",
      description: "Adds two numbers.",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    const model = new RecordingChatModel([callTools({ name: "add", args: { a: 2, b: 3 } }), answer("5")]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      tools: [add],
      approvalHook: () => {
        asked++;
        return undefined;
      },
    });
    const result = await agent.invoke({ messages: [new HumanMessage("2+3")] });
    expect(model.toolNames(0)).toEqual(["tool_search", "add"]);
    expect(toolMessages(result.messages)[0]?.content).toBe("5");
    expect(asked).toBe(0);
  });

  test("an app tool's own bug is TOOL_FAILED (not an unavailable upstream, not retryable) and the run goes on", async () => {
    const rt = await runtime();
    const divide = tool(
      async ({ a, b }) => {
        if (b === 0) throw new RangeError(`cannot divide ${a} by zero`);
        return String(a / b);
      },
      { name: "divide", description: "Divides.", schema: z.object({ a: z.number(), b: z.number() }) },
    );
    const model = new RecordingChatModel([
      callTools({ name: "divide", args: { a: 1, b: 0 } }),
      answer("cannot divide"),
    ]);
    const agent = createGovernedAgent({
      artifactTools: false,
      model,
      governance: rt.governance,
      tools: [divide],
    });
    const result = await agent.invoke({ messages: [new HumanMessage("1/0")] });
    const [message] = toolMessages(result.messages);
    expect(message?.status).toBe("error");
    expect(body(message)).toEqual({
      code: "TOOL_FAILED",
      message: "cannot divide 1 by zero",
      retryable: false,
      attempts: 0,
    });
    expect(result.messages.at(-1)?.content).toBe("cannot divide");
  });

  test("the node refuses to run without a Send task", async () => {
    const rt = await runtime();
    const node = createGovernedToolNode({ governance: rt.governance });
    await expect(node({ messages: [] } as never, {})).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  });

  test.each(THREAD_ID_CASES)(
    "thread_id $given: the tool node and artifact_download agree on session $sessionId and thread $threadId",
    async ({ given, sessionId, threadId }) => {
      const config = { configurable: given === undefined ? {} : { thread_id: given } };
      const rt = await runtime();
      const model = new RecordingChatModel([
        select("mcp__demo__search"),
        callTools({ name: "mcp__demo__search", args: { query: "brca1" } }),
        answer("done"),
      ]);
      const agent = createGovernedAgent({ artifactTools: false, model, governance: rt.governance });
      await agent.invoke({ messages: [new HumanMessage("go")] }, config);
      const [row] = await rt.governance.ledger.query({ toolId: "search" });

      const bench = await createBench(undefined, { invocationSessionId: sessionId });
      bench.serve("https://arxiv.org/pdf/2401.00001v1", PDF);
      const download = createArtifactDownloadTool({ broker: bench.broker, downloads: bench.manager });
      const message = (await download.invoke(
        {
          type: "tool_call",
          id: "dl-1",
          name: "artifact_download",
          args: { mcpInvocationId: "inv-1", candidateId: "c1" },
        },
        config,
      )) as ToolMessage;
      expect(message.status).toBe("success");
      const [job] = await bench.manager.list();

      expect({ sessionId: row?.sessionId, threadId: row?.threadId }).toEqual({ sessionId, threadId });
      expect({ sessionId: job?.sessionId, threadId: job?.threadId }).toEqual({ sessionId, threadId });
    },
  );
});
