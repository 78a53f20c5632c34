import { afterEach, describe, expect, test } from "vitest";
import { downloadAuthorizationRequest } from "../../src/artifacts/download-permission.js";
import type { DownloadPlan } from "../../src/artifacts/download-types.js";
import { candidate, closeDownloadRuntimes, downloadRuntime } from "./download-runtime.js";

afterEach(closeDownloadRuntimes);

const downloadRows = (governance: Awaited<ReturnType<typeof downloadRuntime>>["governance"]) =>
  governance.ledger.query({ toolId: "artifact_download" });

describe("downloads follow the broker's permission hook", () => {
  const request = { mcpInvocationId: "inv-1", candidateId: "a", sessionId: "t1" };

  test("enforced: a download nobody approved is refused with 'approval required' and recorded", async () => {
    const { governance, transfers } = await downloadRuntime();
    await expect(governance.downloads.download(request)).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("approval required"),
    });
    expect(transfers).toEqual([]);
    expect(await downloadRows(governance)).toMatchObject([{ status: "error", sessionId: "t1" }]);
  });

  test("permissions.enforce: false downloads unasked, like the broker calls", async () => {
    const { governance, transfers } = await downloadRuntime({ permissions: { enforce: false } });
    expect((await governance.downloads.download(request)).status).toBe("completed");
    expect(transfers).toHaveLength(1);
    expect(await governance.ledger.listAuthorizations()).toEqual([]);
  });

  test("an app's own authorize hook sees the download as an artifact_download request", async () => {
    const seen: string[] = [];
    const { governance } = await downloadRuntime({
      permissions: {
        authorize: (req) => {
          seen.push(`${req.toolId} ${req.sourceId} ${String(req.input.destinationPath)}`);
          return { allowed: false, reason: "no downloads in this app" };
        },
      },
    });
    await expect(governance.downloads.download(request)).rejects.toThrow(/no downloads in this app/);
    expect(seen).toEqual(["artifact_download arxiv downloads/arxiv/2401.0000a.pdf"]);
  });
});

describe("downloadAuthorizationRequest", () => {
  const catalog = { source: () => ({ manifest: { displayName: "arXiv" } }) } as never;
  const plan = (overrides: Partial<DownloadPlan> = {}): DownloadPlan => ({
    planId: "p1",
    mcpInvocationId: "inv-1",
    candidate: candidate("a"),
    license: "CC-BY-4.0",
    destinationPath: "papers/a.pdf",
    sessionId: "s1",
    threadId: "t1",
    toolCallId: "c1",
    ...overrides,
  });

  test("is the same request for two plans of one call (the card and decision survive a re-run)", () => {
    const first = downloadAuthorizationRequest(catalog, plan());
    const second = downloadAuthorizationRequest(catalog, plan({ planId: "p2" }));
    expect(second).toEqual(first);
    expect(first.input).not.toHaveProperty("planId");
    expect(first).toMatchObject({
      toolId: "artifact_download",
      sourceId: "arxiv",
      threadId: "t1",
      toolCallId: "c1",
    });
  });

  test("refuses a source the catalog does not know", () => {
    expect(() => downloadAuthorizationRequest({ source: () => undefined }, plan())).toThrow(
      expect.objectContaining({ code: "SOURCE_DISABLED" }),
    );
  });
});
