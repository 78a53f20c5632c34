import type { ToolMessage } from "@langchain/core/messages";
import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { createArtifactDownloadTool } from "../../src/artifacts/artifact-download-tool.js";
import { createBench, PDF } from "./download-harness.js";

const State = Annotation.Root({
  args: Annotation<Record<string, unknown>>,
  message: Annotation<ToolMessage | undefined>,
});

async function runTool(args: Record<string, unknown>) {
  const bench = await createBench(undefined, { invocationSessionId: "t1" });
  bench.serve("https://arxiv.org/pdf/2401.00001v1", PDF);
  const downloadTool = createArtifactDownloadTool({ downloads: bench.manager });
  const graph = new StateGraph(State)
    .addNode("tools", async (state, config: LangGraphRunnableConfig) => ({
      message: (await downloadTool.invoke(
        { type: "tool_call", id: "call-1", name: "artifact_download", args: state.args },
        config,
      )) as ToolMessage,
    }))
    .addEdge("__start__", "tools")
    .compile();
  const custom: unknown[] = [];
  let message: ToolMessage | undefined;
  for await (const [mode, chunk] of await graph.stream(
    { args },
    { streamMode: ["custom", "values"], configurable: { thread_id: "t1" } },
  )) {
    if (mode === "custom") custom.push(chunk);
    else message = (chunk as { message?: ToolMessage }).message ?? message;
  }
  return { bench, custom, message };
}

describe("artifact_download tool", () => {
  test("streams progress through config.writer and answers with the completed job", async () => {
    const { bench, custom, message } = await runTool({ mcpInvocationId: "inv-1", candidateId: "c1" });
    expect(message?.status).toBe("success");
    const body = JSON.parse(String(message?.content));
    expect(body).toMatchObject({ status: "completed", bytesDownloaded: PDF.length, candidateId: "c1" });
    // Code reads the same result from the artifact, as it reads a governed call's outcome.
    expect(message?.artifact).toEqual(body);
    expect(custom).toContainEqual(
      expect.objectContaining({ type: "artifact_download_progress", status: "completed" }),
    );
    const [job] = await bench.manager.list();
    expect(job).toMatchObject({ sessionId: "t1", threadId: "t1", toolCallId: "call-1" });
  });

  test("a refused candidate is an error tool message with a structured body", async () => {
    const { message } = await runTool({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      destinationPath: "../x.pdf",
    });
    expect(message?.status).toBe("error");
    expect(JSON.parse(String(message?.content))).toMatchObject({ code: "INVALID_INPUT", retryable: false });
  });
});
