/**
 * A gateway runtime with governed downloads: the bundled sources server (arXiv only, in memory) over
 * the loopback fake providers for the candidates, and a loopback HTTP publisher of the PDFs whose
 * bodies the test paces (the download `fetch` seam sends each `https://arxiv.org/pdf/…` request to it).
 * Real SDK clients connect through `InMemoryTransport`, with a tap on what the gateway sends.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import type { GatewayServer, GatewaySession } from "../../src/gateway/index.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../src/governance/permissions/grant-store.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import {
  createTestGovernance,
  type TestGovernanceOptions,
} from "../../src/testing/create-test-governance.js";
import { startFakeProviderServer } from "../../src/testing/fake-provider-server.js";
import { publicLookup } from "../artifacts/download-harness.js";
import { makePdf } from "../fixtures/pdf/make-pdf.js";
import { arxivFakeRoutes } from "../fixtures/providers/arxiv/routes.js";

/** The paper the candidates name, and the words its PDF holds. */
export const PAPER_ID = "2403.01234v2";
export const PAPER_TEXT = ["Off-target prediction for base editors", "Results: validated sites rank first."];
/** The PDF the publisher serves, in `CHUNKS` parts. */
export const PDF = makePdf([[PAPER_TEXT[0] as string, "x".repeat(600)], [PAPER_TEXT[1] as string]]);
export const CHUNKS = 4;

/** A loopback HTTP publisher of the arXiv PDFs. */
export interface PdfPublisher {
  /** Awaited before each part after the first, with the bytes written so far. @default one event-loop turn */
  pace: (sentBytes: number) => Promise<void>;
  /** Bodies whose client went away before their end. */
  aborted: () => number;
  /** Settles when a body's client goes away before its end (a cancelled transfer). */
  abortedOnce: Promise<void>;
  /** The download `fetch` seam: arxiv.org URLs to the loopback port. */
  fetch: DownloadFetch;
  close: () => Promise<void>;
}

async function startPdfPublisher(): Promise<PdfPublisher> {
  let aborted = 0;
  let resolveAborted!: () => void;
  const abortedOnce = new Promise<void>((resolve) => {
    resolveAborted = resolve;
  });
  const server = createServer((req, res) => {
    if (req.url === `/pdf/${PAPER_ID}`) void send(res);
    else res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const publisher: PdfPublisher = {
    pace: () => new Promise<void>((resolve) => setImmediate(resolve)),
    aborted: () => aborted,
    abortedOnce,
    fetch: (url, init) => fetch(`http://127.0.0.1:${port}${new URL(url).pathname}`, init),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  async function send(res: ServerResponse): Promise<void> {
    res.on("close", () => {
      if (res.writableFinished) return;
      aborted++;
      resolveAborted();
    });
    res.writeHead(200, { "content-type": "application/pdf", "content-length": String(PDF.length) });
    const size = Math.ceil(PDF.length / CHUNKS);
    for (let start = 0; start < PDF.length; start += size) {
      if (start > 0) await publisher.pace(start);
      if (res.destroyed) return;
      res.write(PDF.subarray(start, start + size));
    }
    res.end();
  }
  return publisher;
}

/** The runtime, its publisher and data directory. */
export interface DownloadLab {
  governance: Governance;
  publisher: PdfPublisher;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * A `createTestGovernance` runtime (arXiv's built-in manifest, an in-memory ledger, CAS and grants) with
 * downloads into its temporary data directory, whose `jobs.sqlite` another runtime over the same folder
 * (a console's) reads, as an app's does.
 */
export async function createDownloadLab(
  extra: Pick<TestGovernanceOptions, "permissions"> = {},
): Promise<DownloadLab> {
  const provider = await startFakeProviderServer({ routes: arxivFakeRoutes() });
  const publisher = await startPdfPublisher();
  const t = await createTestGovernance({
    sources: { provider, only: ["arxiv"] },
    downloads: { lookup: publicLookup, fetch: publisher.fetch },
    stores: "files",
    ...extra,
    storage: {
      ledger: new MemoryLedger(),
      contentStore: new MemoryContentStore(),
      grants: new MemoryGrantStore(),
    },
  });
  return {
    governance: t.governance,
    publisher,
    dataDir: t.dataDir,
    async close() {
      await t.close();
      await publisher.close();
      await provider.close();
    },
  };
}

/** A real SDK client of one session, and every message the gateway sent it. */
export interface TappedClient {
  client: Client;
  session: GatewaySession;
  sent: JSONRPCMessage[];
  /** The methods of the notifications the gateway sent. */
  notifications(method: string): JSONRPCMessage[];
}

/**
 * Connects a client through an in-memory pair whose server side records what it sends.
 * @param gateway the gateway
 */
export async function connectTapped(gateway: GatewayServer): Promise<TappedClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  const session = await gateway.connect(serverSide);
  const client = new Client({ name: "gateway-downloads-test", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    client,
    session,
    sent,
    notifications: (method) => sent.filter((message) => "method" in message && message.method === method),
  };
}

/**
 * A connection whose client answers each elicitation with the next decision of `decisions` (and
 * declares no elicitation when there are none), recording every question it was asked.
 * @param gateway the gateway to connect to
 * @param decisions the answers, in order; `undefined`: a client without elicitation
 * @param options the connection's session id and principal
 */
export async function connectDeciding(
  gateway: GatewayServer,
  decisions: string[] | undefined,
  options: { sessionId?: string; principal?: string } = {},
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = await gateway.connect(serverSide, options);
  const client = new Client(
    { name: "deciding-client", version: "1.0.0" },
    { capabilities: decisions ? { elicitation: {} } : {} },
  );
  const asked: ElicitRequest["params"][] = [];
  if (decisions) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      const decision = decisions[asked.length - 1];
      if (decision === undefined) throw new Error(`unexpected question #${asked.length}`);
      return { action: "accept", content: { decision } };
    });
  }
  await client.connect(clientSide);
  const call = async (name: string, args: object) =>
    (await client.callTool({ name, arguments: { ...args } })) as CallToolResult;
  return { asked, call, sessionId: session.sessionId };
}
