/**
 * A hostile streamable HTTP server that echoes the credentials it was sent (a configured bearer header,
 * a configured API-key header, an auth provider's OAuth token) in a tool result, an error result and a
 * JSON-RPC error: through the real governed path (`ServerPool`, `SourceCatalog`, `Broker`), none of them
 * reaches the ledger's rows, the content store or the caller; `SentCredentials` on its own below.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server as McpLowLevelServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import type { ContentObject } from "../../src/governance/audit/content-object.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { Broker } from "../../src/governance/broker/broker.js";
import { SourceCatalog } from "../../src/governance/catalog/source-catalog.js";
import { SourceRegistry } from "../../src/governance/manifests/source-registry.js";
import { REDACTED_CREDENTIAL, SentCredentials } from "../../src/mcp/sent-credentials.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { ledgerUnderTest } from "../../src/testing/conformance/ledger-under-test.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { serverConfig } from "./server-configs.js";

const BEARER = "sk-live-0123456789abcdef";
const API_KEY = "key-fedcba9876543210";
const OAUTH_TOKEN = "oauth-access-token-5f3c2a1b";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the server received, as it would write it back. */
function echoed(headers: Record<string, string | string[] | undefined>): string {
  return `authorization=${String(headers.authorization)} x-api-key=${String(headers["x-api-key"])}`;
}

/** A server whose tools send back the headers each request came with. */
async function echoingServer(): Promise<string> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const newSession = async () => {
    const server = new McpLowLevelServer(
      { name: "echoer", version: "1.0.0" },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: ["whoami", "fail", "throw", "ask"].map((name) => ({
        name,
        inputSchema: { type: "object" as const },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const text = echoed(extra.requestInfo?.headers ?? {});
      if (request.params.name === "throw") throw new McpError(ErrorCode.InternalError, `refused: ${text}`);
      if (request.params.name === "ask") {
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", data: text },
        });
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: { message: `Confirm ${text}`, requestedSchema: { type: "object", properties: {} } },
          },
          ElicitResultSchema,
        );
        return { content: [{ type: "text", text: answer.action }] };
      }
      return {
        content: [{ type: "text", text }],
        structuredContent: { received: text },
        ...(request.params.name === "fail" ? { isError: true } : {}),
      };
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    await server.connect(transport);
    cleanups.push(() => server.close());
    return transport;
  };
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    void (async () => {
      const transport = (sessionId ? sessions.get(sessionId) : undefined) ?? (await newSession());
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

/** A content store that keeps the text of everything put into it, to be searched afterwards. */
class SearchableContentStore extends MemoryContentStore {
  readonly texts: string[] = [];
  override async putObject(object: ContentObject) {
    this.texts.push(Buffer.from(object.bytes).toString("utf8"));
    return super.putObject(object);
  }
}

/** The governed path to the echoing server, with headers or an OAuth token as given. */
async function governedPath(setup: { headers?: Record<string, string>; token?: string }) {
  const url = await echoingServer();
  const registry = new SourceRegistry();
  registry.register(
    makeSource({
      id: "echoer",
      cache: { enabled: false, ttlSeconds: 0 },
      tools: ["whoami", "fail", "throw"].map((id) => makeTool({ id, inputSchema: { type: "object" } })),
    }),
  );
  const token = setup.token;
  const pool = new ServerPool(
    [serverConfig({ id: "echoer", transport: "http", url, headers: setup.headers ?? {} })],
    token === undefined ? {} : { authorization: () => ({ token: async () => token }) },
  );
  cleanups.push(() => pool.close());
  const catalog = new SourceCatalog({ registry, pool });
  await catalog.start();
  cleanups.push(() => catalog.stop());
  const ledger = ledgerUnderTest(new MemoryLedger());
  const store = new SearchableContentStore();
  const broker = new Broker({ catalog, pool, ledgerWriter: ledger.writer, store });
  return { broker, ledger, store };
}

describe("a server that echoes the credentials it was sent", () => {
  test.each([
    [
      "configured headers",
      { headers: { Authorization: `Bearer ${BEARER}`, "X-Api-Key": API_KEY } },
      [BEARER, API_KEY],
    ],
    ["an OAuth token", { token: OAUTH_TOKEN }, [OAUTH_TOKEN]],
  ] as const)(
    "%s reach neither the ledger, the content store nor the caller",
    async (_label, setup, secrets) => {
      const { broker, ledger, store } = await governedPath(setup);
      const seen: unknown[] = [];
      for (const toolId of ["whoami", "fail", "throw"]) {
        seen.push(
          await broker.invoke({ sourceId: "echoer", toolId, input: {}, sessionId: "s" }).catch((e) => e),
        );
      }
      const rows = await ledger.query({ sessionId: "s" });
      expect(rows).toHaveLength(3);
      const written = JSON.stringify(rows) + store.texts.join("\n");
      const returned =
        JSON.stringify(seen) + seen.map((outcome) => String((outcome as Error).message)).join("\n");
      for (const secret of secrets) {
        expect(written).not.toContain(secret);
        expect(returned).not.toContain(secret);
      }
      // The server did receive them and did echo them: what arrived is the redaction mark.
      expect(written).toContain(REDACTED_CREDENTIAL);
    },
  );
});

describe("a server that asks and logs with the credentials it was sent", () => {
  test("the relay sees the question and the log message redacted", async () => {
    const url = await echoingServer();
    const pool = new ServerPool([
      serverConfig({ id: "echoer", transport: "http", url, headers: { "X-Api-Key": API_KEY } }),
    ]);
    cleanups.push(() => pool.close());
    const told: unknown[] = [];
    const result = await pool.callTool(
      "echoer",
      "ask",
      {},
      {
        timeoutMs: 10_000,
        relay: {
          elicit: (params) => {
            told.push(params);
            return { action: "decline" };
          },
          onLog: (params) => told.push(params),
        },
      },
    );
    expect(result.content).toEqual([{ type: "text", text: "decline" }]);
    expect(told).toHaveLength(2);
    expect(JSON.stringify(told)).not.toContain(API_KEY);
    expect(JSON.stringify(told)).toContain(REDACTED_CREDENTIAL);
  });
});

describe("SentCredentials", () => {
  test("a scheme's credential is redacted alone and inside the whole value; short values are left", () => {
    const credentials = new SentCredentials();
    credentials.addHeaderValue(`Bearer ${BEARER}`);
    credentials.addHeaderValue("json");
    const value = { a: [`x ${BEARER} y`, "Bearer json"], [BEARER]: 1, n: 2 };
    expect(credentials.redact(value)).toEqual({
      a: [`x ${REDACTED_CREDENTIAL} y`, "Bearer json"],
      [REDACTED_CREDENTIAL]: 1,
      n: 2,
    });
    const clean = { a: ["nothing"], n: 1 };
    expect(credentials.redact(clean)).toBe(clean);
  });

  test("an error's message, stack and causes are redacted", () => {
    const credentials = new SentCredentials();
    credentials.addHeaderValue(API_KEY);
    const error = new Error(`outer ${API_KEY}`, { cause: new Error(`inner ${API_KEY}`) });
    credentials.redactError(error);
    expect(error.message).toBe(`outer ${REDACTED_CREDENTIAL}`);
    expect(error.stack).not.toContain(API_KEY);
    expect((error.cause as Error).message).toBe(`inner ${REDACTED_CREDENTIAL}`);
  });

  test("the Authorization header of a request is noted before it is sent", async () => {
    const credentials = new SentCredentials();
    const fetch = credentials.observe(async () => new Response("ok"));
    await fetch("http://127.0.0.1/", { headers: { authorization: `Bearer ${OAUTH_TOKEN}` } });
    expect(credentials.redact(`got ${OAUTH_TOKEN}`)).toBe(`got ${REDACTED_CREDENTIAL}`);
  });
});
