/**
 * A governed download with progress in every client mode, against one gateway: the SDK v2 client
 * pinned to 2026-07-28, in `auto` mode and in `legacy` mode, and the SDK 1.x client, each over stdio
 * and over HTTP on loopback. Each prepares an arXiv candidate, calls the `artifact_download` built-in
 * with a progress token, approves it as its revision asks (2026-07-28: the `input_required` round
 * trip, answered by the client's form; 2025-11-25: elicitation), hears the download's progress, and
 * gets the completed job; the ledger holds one row for that download.
 *
 * Stdio is the gateway's own `connectStdio` (the `serveStdio` entry `sciencegate serve gateway` runs)
 * on an in-process pipe framed by the SDKs' stdio transports: a spawned gateway process cannot be
 * given the loopback PDF publisher (its downloads would go to arxiv.org), and the pipe is the same
 * newline-delimited JSON-RPC a process's stdin and stdout carry.
 */
import { PassThrough } from "node:stream";
import {
  Client as ClientV2,
  type ClientOptions as ClientV2Options,
  StreamableHTTPClientTransport as HttpV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport as StdioPipeV1 } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type CallToolResult, ElicitRequestSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { StdioServerTransport as StdioPipeV2 } from "@modelcontextprotocol/server/stdio";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { createDownloadLab, type DownloadLab, PAPER_ID, PDF } from "./gateway-downloads-harness.js";

type Mode = "pinned 2026-07-28" | "auto" | "legacy" | "1.x";
type Wire = "stdio" | "http";

let lab: DownloadLab;
let gateway: GatewayServer;
let http: GatewayHttpServer;
const closers: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  lab = await createDownloadLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  http = await serveGatewayHttp(gateway);
}, 90_000);
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await http?.close();
  await gateway?.close();
  await lab?.close();
}, 90_000);

/** What a test does with a connected client, whatever its SDK. */
interface ModeClient {
  /** The revision the connection settled on. */
  revision: string;
  call(name: string, args: object, onprogress?: (progress: Progress) => void): Promise<CallToolResult>;
  /** The approval questions the client was asked (elicitation, or the round trip's form). */
  asked: string[];
}

/** The gateway's two ends of an in-process stdio pipe; `connectStdio` serves the other two. */
function stdioPipe() {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const connection = gateway.connectStdio({ stdin: toGateway, stdout: fromGateway });
  closers.push(() => connection.close());
  return { clientReads: fromGateway, clientWrites: toGateway };
}

async function connect(mode: Mode, wire: Wire): Promise<ModeClient> {
  const asked: string[] = [];
  if (mode === "1.x") {
    const client = new Client(
      { name: "download-modes-v1", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message));
      return { action: "accept", content: { decision: "allow_once" } };
    });
    // The 1.x client keeps no negotiated version: the stdio pipe's `initialize` answer, or the HTTP
    // transport's version header, says it.
    let revision: string | undefined;
    if (wire === "stdio") {
      const pipe = stdioPipe();
      let heard = "";
      pipe.clientReads.on("data", (chunk: Buffer) => {
        heard += chunk.toString("utf8");
        revision ??= /"protocolVersion":"([^"]+)"/.exec(heard)?.[1];
      });
      // From the client's side a process's stdout is read and its stdin written: the same framing.
      await client.connect(new StdioPipeV1(pipe.clientReads, pipe.clientWrites));
    } else {
      const transport = new StreamableHTTPClientTransport(new URL(http.url));
      await client.connect(transport);
      revision = transport.protocolVersion;
    }
    closers.push(() => client.close());
    return {
      revision: String(revision),
      asked,
      call: async (name, args, onprogress) =>
        (await client.callTool(
          { name, arguments: { ...args } },
          undefined,
          onprogress ? { onprogress, timeout: 60_000 } : {},
        )) as CallToolResult,
    };
  }
  const versionNegotiation: ClientV2Options["versionNegotiation"] = {
    mode: mode === "pinned 2026-07-28" ? { pin: "2026-07-28" } : mode,
  };
  const client = new ClientV2(
    { name: "download-modes-v2", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(String((request.params as { message?: string }).message));
    return { action: "accept", content: { decision: "allow_once" } } as never;
  });
  if (wire === "stdio") {
    const pipe = stdioPipe();
    await client.connect(new StdioPipeV2(pipe.clientReads, pipe.clientWrites));
  } else {
    await client.connect(new HttpV2(new URL(http.url)));
  }
  closers.push(() => client.close());
  return {
    revision: String(client.getNegotiatedProtocolVersion()),
    asked,
    call: async (name, args, onprogress) =>
      (await client.callTool(
        { name, arguments: { ...args } },
        onprogress ? { onprogress, timeout: 60_000 } : {},
      )) as CallToolResult,
  };
}

/** The download rows of the ledger. */
async function downloadRows() {
  return (await lab.governance.ledger.query({})).filter((row) => row.toolId === "artifact_download");
}

const COMBINATIONS: Array<[Mode, Wire, string]> = [
  ["pinned 2026-07-28", "stdio", "2026-07-28"],
  ["auto", "stdio", "2026-07-28"],
  ["legacy", "stdio", "2025-11-25"],
  ["1.x", "stdio", "2025-11-25"],
  ["pinned 2026-07-28", "http", "2026-07-28"],
  ["auto", "http", "2026-07-28"],
  ["legacy", "http", "2025-11-25"],
  ["1.x", "http", "2025-11-25"],
];

describe("a download with progress in every client mode, one gateway", () => {
  test.each(COMBINATIONS)(
    "%s over %s (%s): approved as its revision asks, progress heard, completed with one row",
    async (mode, wire, revision) => {
      const client = await connect(mode, wire);
      expect(client.revision).toBe(revision);
      const prepared = await client.call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
      expect(prepared.isError, JSON.stringify(prepared.content)).toBeFalsy();
      const { mcpInvocationId, artifacts } = prepared.structuredContent as {
        mcpInvocationId: string;
        artifacts: { candidateId: string }[];
      };
      const rowsBefore = (await downloadRows()).length;

      const progress: Progress[] = [];
      const destinationPath = `modes/${mode.replace(/\W+/g, "-")}-${wire}.pdf`;
      const result = await client.call(
        "artifact_download",
        { mcpInvocationId, candidateId: artifacts[0]?.candidateId ?? "", destinationPath },
        (step) => progress.push(step),
      );
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
      // Asked once, with the download's card (a round trip's form, or elicitation).
      expect(client.asked).toHaveLength(1);
      expect(client.asked[0]).toContain("artifact_download");
      // The v2 client reports its own round trips to the same callback (progress = round number):
      // one round for 2026-07-28, whose approval is a round trip; none for 2025-11-25.
      const rounds = progress.filter((step) => step.message?.startsWith("Fulfilling input required"));
      expect(rounds.map((step) => step.progress)).toEqual(revision === "2026-07-28" ? [1] : []);
      // The gateway's progress of this call: increasing byte counts up to the whole file.
      const download = progress.filter((step) => step.message?.startsWith("artifact_download "));
      expect(download).toHaveLength(progress.length - rounds.length);
      const values = download.map((step) => step.progress);
      expect(values.length).toBeGreaterThanOrEqual(2);
      expect(values.at(-1)).toBe(PDF.length);
      for (const [i, value] of values.entries()) {
        if (i > 0) expect(value).toBeGreaterThan(values[i - 1] as number);
      }
      const rows = (await downloadRows()).slice(rowsBefore);
      expect(rows.map((row) => row.status)).toEqual(["ok"]);
    },
    90_000,
  );
});
