/**
 * Clients of the gateway over Streamable HTTP: the real SDK `Client` with its
 * `StreamableHTTPClientTransport`, and raw `node:http` requests for what no SDK client sends (a wrong
 * `Host`, a foreign `Origin`, an oversize or chunked body, garbage).
 */
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  LATEST_PROTOCOL_VERSION,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** An SDK client of one HTTP session. */
export interface HttpGatewayClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The MCP session id the server gave (`Mcp-Session-Id`). */
  mcpSessionId: string;
  /** How many `notifications/tools/list_changed` arrived (on a POST stream or the GET stream). */
  listChanged(): number;
  toolNames(): Promise<string[]>;
  call(name: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
}

/**
 * Connects the SDK client over Streamable HTTP.
 * @param url the gateway's `/mcp` URL
 * @param token sent as `Authorization: Bearer <token>` when given
 */
export async function connectHttpClient(url: string, token?: string): Promise<HttpGatewayClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
  });
  const client = new Client({ name: "http-test-client", version: "1.0.0" });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await client.connect(transport);
  return {
    client,
    transport,
    mcpSessionId: transport.sessionId as string,
    listChanged: () => changes,
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
    call: async (name, args = {}, signal) =>
      (await client.callTool(
        { name, arguments: args },
        undefined,
        signal ? { signal } : {},
      )) as CallToolResult,
  };
}

/** The text of a result's first block. */
export function textOf(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === "text" ? first.text : "";
}

/** A raw response: status, headers, body text, and the body as JSON when it is. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** A raw request; `body` chunks are sent without `Content-Length` (chunked) when `chunked`. */
export interface RawRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  chunked?: boolean;
}

/** The headers a Streamable HTTP POST carries. */
export const MCP_POST_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
};

/** An `initialize` request, as a raw body. */
export function initializeBody(id: number | string = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "raw-client", version: "1.0.0" },
    },
  });
}

/**
 * Sends one request on a fresh connection and reads the whole answer (an SSE answer until the server
 * ends it). Resolves with a network error too (as `status: 0`), so a test can assert "no crash".
 * @param url the gateway's `/mcp` URL
 * @param raw method, path, headers (`Host` included), body
 */
export function rawRequest(url: string, raw: RawRequest = {}): Promise<RawResponse> {
  const target = new URL(url);
  const body = raw.body === undefined ? undefined : Buffer.from(raw.body);
  const headers: Record<string, string> = { ...raw.headers };
  if (body && !raw.chunked && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length")) {
    headers["Content-Length"] = String(body.length);
  }
  return new Promise((resolve) => {
    const req = request(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port,
        path: raw.path ?? target.pathname,
        method: raw.method ?? "POST",
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
        });
        res.on("error", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: "", json: undefined }),
        );
      },
    );
    req.on("error", (error) => resolve({ status: 0, headers: {}, text: String(error), json: undefined }));
    if (body && raw.chunked) {
      // Several writes without a length: the server sees the size only while reading.
      const step = 256 * 1024;
      for (let at = 0; at < body.length; at += step) req.write(body.subarray(at, at + step));
      req.end();
    } else {
      req.end(body);
    }
  });
}

/** The JSON-RPC messages of an SSE body (`data:` lines), or of a JSON body. */
export function messagesOf(response: RawResponse): unknown[] {
  if (response.json !== undefined) return Array.isArray(response.json) ? response.json : [response.json];
  return response.text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as unknown);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
