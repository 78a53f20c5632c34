import { existsSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { type CallToolResult, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import {
  CHUNKS,
  connectTapped,
  createDownloadLab,
  type DownloadLab,
  PAPER_ID,
  PAPER_TEXT,
  PDF,
  type TappedClient,
} from "./gateway-downloads-harness.js";

let lab: DownloadLab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.close();
  gateway = undefined;
  lab = undefined;
});

interface Candidate {
  mcpInvocationId: string;
  candidateId: string;
}

/** A runtime, an eager gateway, one client whose session allows downloads, and a candidate it prepared. */
async function setup() {
  lab = await createDownloadLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  const a = await connectTapped(gateway);
  await lab.governance.permissions.setApprovalMode(a.session.sessionId, "always_allow");
  return { lab, gateway, a, candidate: await prepare(a) };
}

/** The first turn: the governed arXiv call whose result offers the PDF candidate. */
async function prepare(a: TappedClient): Promise<Candidate> {
  const result = await call(a, "mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  expect(result.isError).toBeUndefined();
  const { mcpInvocationId, artifacts } = result.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  return { mcpInvocationId, candidateId: artifacts[0]?.candidateId ?? "" };
}

async function call(a: TappedClient, name: string, args: object): Promise<CallToolResult> {
  return (await a.client.callTool({ name, arguments: { ...args } })) as CallToolResult;
}

/** The progress a client received, and a wait for a number of bytes. */
function progressLog() {
  const seen: Progress[] = [];
  const waiting: { bytes: number; resolve: () => void }[] = [];
  return {
    seen,
    onprogress(progress: Progress) {
      seen.push(progress);
      for (const waiter of waiting.filter((w) => progress.progress >= w.bytes)) waiter.resolve();
    },
    reached(bytes: number): Promise<void> {
      if (seen.some((p) => p.progress >= bytes)) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ bytes, resolve }));
    },
  };
}

function responseTo(a: TappedClient, id: string | number) {
  return a.sent.findIndex((message) => "id" in message && message.id === id && !("method" in message));
}

describe("gateway downloads: progress", () => {
  test("a download with a progress token reports its bytes as increasing notifications/progress of that call, all before the answer", async () => {
    const { lab, a, candidate } = await setup();
    const progress = progressLog();
    // Lockstep: the publisher sends each part only once the client has heard of the bytes before it.
    lab.publisher.pace = (sentBytes) => progress.reached(sentBytes);
    const result = (await a.client.callTool(
      { name: "artifact_download", arguments: { ...candidate } },
      undefined,
      {
        onprogress: progress.onprogress,
      },
    )) as CallToolResult;

    expect(result.isError).toBeUndefined();
    const job = result.structuredContent as { jobId: string; status: string; finalPath: string };
    expect(job).toMatchObject({
      status: "completed",
      bytesDownloaded: PDF.length,
      candidateId: candidate.candidateId,
    });
    expect(readFileSync(job.finalPath)).toEqual(Buffer.from(PDF));
    const values = progress.seen.map((p) => p.progress);
    expect(values.length).toBeGreaterThanOrEqual(CHUNKS);
    expect(values[0]).toBe(0);
    expect(values.at(-1)).toBe(PDF.length);
    for (const [i, value] of values.entries())
      if (i > 0) expect(value).toBeGreaterThan(values[i - 1] as number);
    expect(progress.seen.at(-1)?.message).toBe(
      `artifact_download ${candidate.candidateId} (job ${job.jobId}): running, ${PDF.length} bytes`,
    );
    // Every notification carries the call's token, and all left before the call's answer.
    const sent = a.notifications("notifications/progress");
    expect(sent).toHaveLength(values.length);
    const tokens = new Set(sent.map((n) => ("params" in n ? n.params?.progressToken : undefined)));
    expect(tokens.size).toBe(1);
    const [token] = [...tokens] as (string | number)[];
    expect(a.sent.lastIndexOf(sent.at(-1) as never)).toBeLessThan(responseTo(a, token as string | number));
  });

  test("without a progress token the same download sends no progress notification", async () => {
    const { a, candidate } = await setup();
    const result = await call(a, "artifact_download", candidate);
    expect(result.structuredContent).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect(a.notifications("notifications/progress")).toEqual([]);
  });
});

describe("gateway downloads: cancellation", () => {
  test("notifications/cancelled stops the transfer: the job ends cancelled with one CANCELLED row, the client gets no answer, and a later call works", async () => {
    const { lab, a, candidate } = await setup();
    const progress = progressLog();
    // A slow publisher: the first part, then nothing until the client goes away.
    lab.publisher.pace = () => new Promise<void>(() => {});
    const controller = new AbortController();
    const running = a.client.callTool({ name: "artifact_download", arguments: { ...candidate } }, undefined, {
      signal: controller.signal,
      onprogress: progress.onprogress,
    });
    await progress.reached(1);
    controller.abort("the user stopped it");
    await expect(running).rejects.toThrow();

    await lab.publisher.abortedOnce;
    const sessionId = a.session.sessionId;
    await vi.waitFor(async () => {
      expect(await lab.governance.downloads.list()).toMatchObject([
        { status: "cancelled", sessionId, error: { code: "CANCELLED" } },
      ]);
      const rows = await lab.governance.ledger.query({ sessionId, toolId: "artifact_download" });
      expect(rows).toMatchObject([
        { sourceId: "sciencegate", threadId: sessionId, status: "error", error: { code: "CANCELLED" } },
      ]);
    });
    const [cancelled] = await lab.governance.downloads.list();
    expect(existsSync(cancelled?.finalPath as string)).toBe(false);
    expect(readdirSync(join(lab.dataDir, "workspace", ".staging"))).toEqual([]);
    const token = a.notifications("notifications/progress").map((n) => ("params" in n ? n.params : {}))[0]
      ?.progressToken as string | number;
    expect(responseTo(a, token)).toBe(-1);
    expect(lab.publisher.aborted()).toBe(1);

    lab.publisher.pace = () => Promise.resolve();
    const again = await call(a, "artifact_download", candidate);
    expect(again.structuredContent).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect((await lab.governance.downloads.list()).map((job) => job.status)).toEqual([
      "cancelled",
      "completed",
    ]);
  });
});

describe("gateway downloads: the extracted text as a resource", () => {
  /** Downloads the candidate and extracts it in session `a`. */
  async function extracted() {
    const { lab, gateway, a, candidate } = await setup();
    const download = await call(a, "artifact_download", candidate);
    const { jobId } = download.structuredContent as { jobId: string };
    const result = await call(a, "paper_extract_pdf", { artifactJobId: jobId });
    const uri = `sciencegate://papers/${jobId}/fulltext.md`;
    const textPath = join(lab.dataDir, "papers", jobId, "fulltext.md");
    return { lab, gateway, a, jobId, result, uri, textPath };
  }

  test("paper_extract_pdf names the path and the resource; resources/list lists it and resources/read returns the text", async () => {
    const { a, jobId, result, uri, textPath } = await extracted();
    expect(a.client.getServerCapabilities()?.resources).toEqual({ listChanged: true });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ artifactJobId: jobId, textPath, pageCount: 2 });
    expect(result.content).toContainEqual({
      type: "resource_link",
      uri,
      name: `papers/${jobId}/fulltext.md`,
      title: `Full text of arxiv ${PAPER_ID.replace(/v\d+$/, "")}`,
      description: expect.stringContaining(`download job ${jobId} (2 pages`),
      mimeType: "text/markdown",
    });
    // Announced once, related to the call, before its answer.
    expect(a.notifications("notifications/resources/list_changed")).toHaveLength(1);

    const { resources } = await a.client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri, mimeType: "text/markdown" })]);
    const read = await a.client.readResource({ uri });
    expect(read.contents).toEqual([{ uri, mimeType: "text/markdown", text: readFileSync(textPath, "utf8") }]);
    for (const line of PAPER_TEXT)
      expect(read.contents).toMatchObject([{ text: expect.stringContaining(line) }]);

    // The same extraction again: the same resource, nothing new to announce.
    const again = await call(a, "paper_extract_pdf", { artifactJobId: jobId });
    expect(again.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri }));
    expect(a.notifications("notifications/resources/list_changed")).toHaveLength(1);
    expect((await a.client.listResources()).resources).toHaveLength(1);
  });

  test("another session neither lists nor reads it", async () => {
    const { gateway, uri } = await extracted();
    const b = await connectTapped(gateway);
    expect((await b.client.listResources()).resources).toEqual([]);
    await expect(b.client.readResource({ uri })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining("not an extraction of this session"),
    });
  });

  test("another session extracting the job is refused and audited; it gains no resource and reads no text", async () => {
    const { lab, gateway, a, jobId, uri } = await extracted();
    const b = await connectTapped(gateway);
    await lab.governance.permissions.setApprovalMode(b.session.sessionId, "always_allow");
    const refused = await call(b, "paper_extract_pdf", { artifactJobId: jobId });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("belongs to another session"),
    });
    expect(JSON.stringify(refused)).not.toContain(PAPER_TEXT[0]);
    expect(JSON.stringify(refused)).not.toContain("fulltext.md");
    expect(refused.content).not.toContainEqual(expect.objectContaining({ type: "resource_link" }));
    expect(b.notifications("notifications/resources/list_changed")).toHaveLength(0);
    expect((await b.client.listResources()).resources).toEqual([]);
    await expect(b.client.readResource({ uri })).rejects.toMatchObject({ code: -32002 });
    const rows = await lab.governance.ledger.query({
      sessionId: b.session.sessionId,
      toolId: "paper_extract_pdf",
    });
    expect(rows).toMatchObject([{ status: "error", error: { code: "PERMISSION_DENIED" } }]);
    // A still reads its own.
    expect((await a.client.readResource({ uri })).contents).toHaveLength(1);
  });

  test.each([
    ["a traversal", (jobId: string) => `sciencegate://papers/${jobId}/../../../etc/passwd`],
    ["a parent folder", () => "sciencegate://papers/../fulltext.md"],
    ["an encoded traversal", () => "sciencegate://papers/%2e%2e/fulltext.md"],
    ["another file of the extraction", (jobId: string) => `sciencegate://papers/${jobId}/manifest.json`],
    ["a file uri of the text", (jobId: string) => `file:///tmp/papers/${jobId}/fulltext.md`],
  ])("%s is refused as invalid params, and the session goes on", async (_name, uriOf) => {
    const { a, jobId, uri } = await extracted();
    await expect(a.client.readResource({ uri: uriOf(jobId) })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
    });
    expect((await a.client.readResource({ uri })).contents).toHaveLength(1);
  });

  test("a symbolic link planted at the text or its folder is refused, not followed", async () => {
    const { lab, a, jobId, uri, textPath } = await extracted();
    const secret = join(lab.dataDir, "secret.txt");
    writeFileSync(secret, "not for clients");
    renameSync(textPath, `${textPath}.moved`);
    symlinkSync(secret, textPath);
    await expect(a.client.readResource({ uri })).rejects.toMatchObject({
      code: ErrorCode.InternalError,
      message: expect.stringContaining("fulltext.md is a symbolic link"),
    });
    const folder = join(lab.dataDir, "papers", jobId);
    renameSync(folder, `${folder}.moved`);
    symlinkSync(lab.dataDir, folder);
    await expect(a.client.readResource({ uri })).rejects.toMatchObject({
      code: ErrorCode.InternalError,
      message: expect.stringContaining("is a symbolic link"),
    });
  });
});
