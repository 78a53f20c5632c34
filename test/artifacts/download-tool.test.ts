import type { ToolMessage } from "@langchain/core/messages";
import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";
import { describe, expect, test, vi } from "vitest";
import { createArtifactDownloadTool } from "../../src/artifacts/artifact-download-tool.js";
import { createBench, PDF, stalledBody } from "./download-harness.js";

const State = Annotation.Root({
  args: Annotation<Record<string, unknown>>,
  message: Annotation<ToolMessage | undefined>,
});

async function runTool(args: Record<string, unknown>) {
  const bench = await createBench(undefined, { invocationSessionId: "t1" });
  bench.serve("https://arxiv.org/pdf/2401.00001v1", PDF);
  const downloadTool = createArtifactDownloadTool({ broker: bench.broker, downloads: bench.manager });
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

  test.each([
    [true, "cancelled"],
    [false, "completed"],
  ])(
    "cancelOnAbort %s: aborting the call's signal mid-transfer leaves the job %s",
    async (cancelOnAbort, status) => {
      const bench = await createBench(undefined, { invocationSessionId: "t1" });
      let release!: (rest: Uint8Array) => void;
      const rest = new Promise<Uint8Array>((resolve) => {
        release = resolve;
      });
      bench.routes.set(
        "https://arxiv.org/pdf/2401.00001v1",
        (_request, signal) => new Response(stalledBody(PDF.slice(0, 10), rest, signal)),
      );
      const downloadTool = createArtifactDownloadTool({
        broker: bench.broker,
        downloads: bench.manager,
        cancelOnAbort,
      });
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const call = downloadTool.invoke(
        {
          type: "tool_call",
          id: "call-1",
          name: "artifact_download",
          args: { mcpInvocationId: "inv-1", candidateId: "c1" },
        },
        {
          signal: controller.signal,
          configurable: { thread_id: "t1" },
          writer: (event: { bytesDownloaded: number }) => event.bytesDownloaded > 0 && started(),
        } as LangGraphRunnableConfig,
      );
      await running;
      controller.abort();
      await expect(call).rejects.toThrow();
      release(PDF.slice(10));
      await vi.waitFor(async () => expect(await bench.manager.list()).toMatchObject([{ status }]));
      const rows = await bench.ledger.query({ toolId: "artifact_download" });
      expect(rows).toMatchObject([
        cancelOnAbort ? { status: "error", error: { code: "CANCELLED" } } : { status: "ok" },
      ]);
    },
  );
});
