import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { paperAgentScript } from "../../examples/demo/paper-agent-script.js";
import { hasCalled, lastToolResult, ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";

const echo = tool(async () => "ok", { name: "echo", description: "echo", schema: z.object({}) });

describe("ScriptedChatModel", () => {
  test("each turn is a function of the messages so far; ids are unique; bound tools are recorded", async () => {
    const model = new ScriptedChatModel(
      (messages, turn) =>
        turn === 0 ? { toolCalls: [{ name: "echo", args: { n: messages.length } }] } : { text: "done" },
      "t",
    );
    const bound = model.bindTools([echo]);
    const first = (await bound.invoke([new HumanMessage("hi")])) as AIMessage;
    const second = (await bound.invoke([new HumanMessage("hi"), first])) as AIMessage;
    expect(first.id).toBe("t-ai-0");
    expect(first.tool_calls).toEqual([{ id: "t-call-0-0", name: "echo", args: { n: 1 }, type: "tool_call" }]);
    expect(second).toMatchObject({ id: "t-ai-1", content: "done" });
    expect(model.boundTools).toEqual([["echo"], ["echo"]]);
  });

  test("hasCalled and lastToolResult read the conversation; error results do not count as results", () => {
    const call = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "x", args: {} }] });
    const ok = new ToolMessage({ tool_call_id: "c1", name: "x", content: '{"v":1}' });
    const failed = new ToolMessage({
      tool_call_id: "c2",
      name: "x",
      content: '{"code":"TIMEOUT"}',
      status: "error",
    });
    expect(hasCalled([call], "x")).toBe(true);
    expect(hasCalled([call], "y")).toBe(false);
    expect(lastToolResult([call, ok, failed], "x")).toEqual({ v: 1 });
    expect(lastToolResult([call, failed], "x")).toBeUndefined();
  });
});

describe("paperAgentScript", () => {
  const ask = (name: string, args: Record<string, unknown> = {}) =>
    new AIMessage({ content: "", tool_calls: [{ id: `${name}-id`, name, args }] });
  const answer = (name: string, body: unknown, status: "success" | "error" = "success") =>
    new ToolMessage({ tool_call_id: `${name}-id`, name, content: JSON.stringify(body), status });
  const paper = {
    identifier: "2403.01234",
    title: "A paper.",
    primaryCitation: { label: "[arXiv:2403.01234v2](https://arxiv.org/abs/2403.01234v2)" },
  };

  test("passes the real invocation, candidate and job ids of earlier results on", () => {
    const plan = { invocationId: "inv-7", records: [paper], artifacts: [{ candidateId: "cand-1" }] };
    const base = [
      new HumanMessage("q"),
      ask("tool_search"),
      ask("mcp__pubmed__search"),
      ask("mcp__arxiv__lookup"),
      answer("mcp__arxiv__lookup", { invocationId: "inv-6", records: [paper] }),
    ];
    expect(paperAgentScript(base)).toEqual({
      toolCalls: [{ name: "mcp__arxiv__prepare_paper_download", args: { id: "2403.01234" } }],
    });
    const planned = [
      ...base,
      ask("mcp__arxiv__prepare_paper_download"),
      answer("mcp__arxiv__prepare_paper_download", plan),
    ];
    expect(paperAgentScript(planned)).toEqual({
      toolCalls: [{ name: "artifact_download", args: { mcpInvocationId: "inv-7", candidateId: "cand-1" } }],
    });
    const downloaded = [
      ...planned,
      ask("artifact_download"),
      answer("artifact_download", { status: "completed", jobId: "job-9" }),
    ];
    expect(paperAgentScript(downloaded)).toEqual({
      toolCalls: [{ name: "paper_extract_pdf", args: { artifactJobId: "job-9" } }],
    });
  });

  test("a denied download skips the extraction and claims no full text", () => {
    const messages = [
      new HumanMessage("q"),
      ask("tool_search"),
      ask("mcp__pubmed__search"),
      ask("mcp__arxiv__lookup"),
      answer("mcp__arxiv__lookup", { invocationId: "inv-6", records: [paper] }),
      ask("mcp__arxiv__prepare_paper_download"),
      answer("mcp__arxiv__prepare_paper_download", {
        invocationId: "inv-7",
        records: [paper],
        artifacts: [{ candidateId: "c" }],
      }),
      ask("artifact_download"),
      answer("artifact_download", { code: "PERMISSION_DENIED", message: "denied" }, "error"),
    ];
    const reply = paperAgentScript(messages);
    expect(reply).toEqual({
      text: '- arXiv: "A paper" is a preprint, not peer-reviewed by arXiv [arXiv:2403.01234v2].',
    });
  });
});
