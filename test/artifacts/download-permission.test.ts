import { afterEach, describe, expect, test } from "vitest";
import { downloadArtifact, downloadCall } from "../../src/artifacts/artifact-download-tool.js";
import { SessionSettings } from "../../src/governance/permissions/session-settings.js";
import { createBench } from "./download-harness.js";
import { closeDownloadRuntimes, downloadRuntime } from "./download-runtime.js";

afterEach(closeDownloadRuntimes);

const downloadRows = (governance: Awaited<ReturnType<typeof downloadRuntime>>["governance"]) =>
  governance.ledger.query({ toolId: "artifact_download" });

describe("downloads follow the broker's permission hook", () => {
  const request = { mcpInvocationId: "inv-1", candidateId: "a", sessionId: "t1" };

  test("enforced: a download nobody approved is refused with 'approval required' and recorded", async () => {
    const { governance, transfers } = await downloadRuntime();
    await expect(downloadArtifact({ governance, ...request })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("approval required"),
    });
    expect(transfers).toEqual([]);
    expect(await downloadRows(governance)).toMatchObject([{ status: "error", sessionId: "t1" }]);
  });

  test("permissions.enforce: false downloads unasked, like the broker calls", async () => {
    const { governance, transfers } = await downloadRuntime({ permissions: { enforce: false } });
    expect((await downloadArtifact({ governance, ...request })).status).toBe("completed");
    expect(transfers).toHaveLength(1);
    expect(await governance.ledger.listAuthorizations()).toEqual([]);
  });

  test("an app's own authorize hook sees the download as an artifact_download request", async () => {
    const seen: string[] = [];
    const { governance } = await downloadRuntime({
      permissions: {
        authorize: (req) => {
          seen.push(`${req.toolId} ${String(req.input.sourceId)} ${String(req.input.destinationPath)}`);
          return { allowed: false, reason: "no downloads in this app" };
        },
      },
    });
    await expect(downloadArtifact({ governance, ...request })).rejects.toThrow(/no downloads in this app/);
    expect(seen).toEqual(["artifact_download arxiv downloads/arxiv/2401.0000a.pdf"]);
  });
});

describe("the permission request of a download (Broker.authorizationRequest)", () => {
  const call = {
    mcpInvocationId: "inv-1",
    candidateId: "c1",
    destinationPath: "papers/a.pdf",
    sessionId: "s1",
    threadId: "t1",
    toolCallId: "c1",
  };

  test("is the same request for two plans of one call (the card and decision survive a re-run)", async () => {
    const bench = await createBench();
    const first = await bench.broker.authorizationRequest(downloadCall(call));
    const second = await bench.broker.authorizationRequest(downloadCall(call));
    expect(second).toEqual(first);
    expect(first.input).not.toHaveProperty("planId");
    expect(first).toMatchObject({
      toolId: "artifact_download",
      input: { sourceId: "arxiv", destinationPath: "papers/a.pdf" },
      threadId: "t1",
      toolCallId: "c1",
    });
  });

  test("refuses a source the session switched off", async () => {
    const sessions = new SessionSettings();
    const bench = await createBench(undefined, { sessions });
    await sessions.disableSource("s1", "arxiv");
    await expect(bench.broker.authorizationRequest(downloadCall(call))).rejects.toMatchObject({
      code: "SOURCE_DISABLED",
    });
  });
});
