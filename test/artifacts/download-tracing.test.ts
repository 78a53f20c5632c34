import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { describe, expect, test } from "vitest";
import { recordSpans } from "../core/span-recorder.js";
import { createBench, PDF } from "./download-harness.js";

const recorder = recordSpans();
const URL_1 = "https://arxiv.org/pdf/2401.00001v1";

describe("download job spans", () => {
  test("a completed job is one span under the caller's, carrying its ledger row's invocation id", async () => {
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    const result = await trace.getTracer("the-app").startActiveSpan("artifact_download", async (tool) => {
      try {
        return await bench.download({
          mcpInvocationId: "inv-1",
          candidateId: "c1",
          sessionId: "s1",
          threadId: "t1",
          toolCallId: "call-1",
        });
      } finally {
        tool.end();
      }
    });
    expect(result.status).toBe("completed");
    const job = recorder.one("sciencegate.download_job");
    expect(job.kind).toBe(SpanKind.INTERNAL);
    expect(job.status.code).toBe(SpanStatusCode.UNSET);
    // Under the broker's span of the call, itself under the tool's.
    const invoke = recorder.one("sciencegate.invoke sciencegate/artifact_download");
    expect(job.parentSpanContext?.spanId).toBe(invoke.spanContext().spanId);
    expect(invoke.parentSpanContext?.spanId).toBe(recorder.one("artifact_download").spanContext().spanId);
    const row = await bench.ledger.findByCall("t1", "call-1");
    expect(row?.status).toBe("ok");
    expect(job.attributes).toEqual({
      "sciencegate.download.job_id": result.jobId,
      "sciencegate.source_id": "arxiv",
      "sciencegate.download.candidate_id": "c1",
      "sciencegate.download.mcp_invocation_id": "inv-1",
      "sciencegate.session_id": "s1",
      "gen_ai.conversation.id": "t1",
      "gen_ai.tool.call.id": "call-1",
      "sciencegate.invocation_id": row?.invocationId,
      "sciencegate.download.status": "completed",
      "sciencegate.download.bytes": PDF.length,
      "sciencegate.attempts": 1,
    });
  });

  test("a failed job is an ERROR span with the job's error code", async () => {
    const bench = await createBench(undefined, { maxBytes: 1000 });
    bench.serve(URL_1, PDF);
    const result = await bench.download({
      mcpInvocationId: "inv-1",
      candidateId: "c1",
      sessionId: "s1",
    });
    expect(result.status).toBe("failed");
    const job = recorder.one("sciencegate.download_job");
    expect(job.status.code).toBe(SpanStatusCode.ERROR);
    expect(job.attributes).toMatchObject({
      "error.type": "RESPONSE_TOO_LARGE",
      "sciencegate.download.status": "failed",
    });
    const [row] = await bench.ledger.query({ toolId: "artifact_download" });
    expect(job.attributes["sciencegate.invocation_id"]).toBe(row?.invocationId);
  });
});
