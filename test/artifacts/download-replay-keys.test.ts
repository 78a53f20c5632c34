/**
 * The replay rule of `artifact_download` is the broker's (a `threadId:toolCallId` key is bound to
 * session, principal, source, tool and arguments): a reused key with anything else is refused
 * `tool_call_id_reused` on a row of its own, and another thread's same id is another call.
 */
import { describe, expect, test } from "vitest";
import type { DownloadRequest } from "../../src/artifacts/download-types.js";
import { createBench, makeCandidate, PDF } from "./download-harness.js";

const URL_1 = "https://arxiv.org/pdf/2401.00001v1";
const URL_2 = "https://arxiv.org/pdf/2401.00002v1";
const first: DownloadRequest = {
  mcpInvocationId: "inv-1",
  candidateId: "c1",
  sessionId: "s1",
  principal: "alice",
  threadId: "t1",
  toolCallId: "call-1",
};

describe("artifact_download: a reused tool-call id is refused as for an MCP tool", () => {
  test.each([
    ["other arguments", { candidateId: "c2" }],
    ["another session", { sessionId: "s2" }],
    ["another principal", { principal: "mallory" }],
  ])("%s: PERMISSION_DENIED tool_call_id_reused, one row of its own, nothing fetched", async (_, change) => {
    const bench = await createBench(
      [makeCandidate(), makeCandidate({ candidateId: "c2", url: URL_2, sourceRecordId: "2401.00002v1" })],
      { invocationSessionId: "s1" },
    );
    bench.serve(URL_1, PDF);
    bench.serve(URL_2, PDF);
    expect((await bench.download(first)).status).toBe("completed");
    const seen = bench.seen.length;
    await expect(bench.download({ ...first, ...change })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      data: { reason: "tool_call_id_reused" },
    });
    expect(bench.seen).toHaveLength(seen);
    const rows = await bench.ledger.query({ toolId: "artifact_download" });
    expect(rows.map((row) => [row.status, row.toolCallId, row.error?.code])).toEqual([
      ["ok", "call-1", undefined],
      ["error", undefined, "PERMISSION_DENIED"],
    ]);
  });

  test("another thread: the same id is another call, which runs (not the first call's result)", async () => {
    const bench = await createBench();
    bench.serve(URL_1, PDF);
    const one = await bench.download(first);
    const other = await bench.download({ ...first, threadId: "t2", destinationPath: "other.pdf" });
    expect(other.status).toBe("completed");
    expect(other.jobId).not.toBe(one.jobId);
    expect(bench.seen).toHaveLength(2);
    expect((await bench.ledger.query({ toolId: "artifact_download" })).map((r) => r.threadId)).toEqual([
      "t1",
      "t2",
    ]);
  });
});
