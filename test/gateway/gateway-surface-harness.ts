/**
 * A runtime over one upstream `McpServer` (`up`) reached through the real `ServerPool` over an
 * in-memory transport (so upstream requests and notifications take the pool's own paths), and SDK
 * clients of a gateway in front of it, connected in memory.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type ClientCapabilities,
  CreateMessageResultSchema,
  ElicitResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { GatewayServer } from "../../src/gateway/index.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import type { InvocationRecord } from "../../src/governance/audit/index.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import type { SourceManifestInput } from "../../src/governance/manifests/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

/** The upstream server and what it saw. */
export interface Upstream {
  /** The current server instance (one per pool connection). */
  server(): McpServer;
  /** `resources/subscribe` and `unsubscribe` requests it received, by uri. */
  subscribes: string[];
  unsubscribes: string[];
  /** Log levels it was set to. */
  levels: string[];
}

/**
 * The upstream server: prompts (one with a completable argument), a resource, a template with
 * completion, subscriptions, logging, and tools that elicit, sample, report progress and log.
 */
export function createUpstream(): { upstream: Upstream; build: () => McpServer } {
  const upstream: Upstream = {
    server: () => {
      throw new Error("not connected");
    },
    subscribes: [],
    unsubscribes: [],
    levels: [],
  };
  const build = () => {
    const mcp = new McpServer(
      { name: "up", version: "1.0.0" },
      { capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } } },
    );
    const ro = { inputSchema: {}, annotations: { readOnlyHint: true } };
    mcp.registerPrompt("greet", { description: "Greets.", argsSchema: { who: z.string() } }, ({ who }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Hello, ${who}!` } }],
    }));
    mcp.registerPrompt(
      "pick",
      {
        argsSchema: {
          colour: completable(z.string(), (value) =>
            ["red", "rose", "blue"].filter((c) => c.startsWith(value)),
          ),
        },
      },
      ({ colour }) => ({ messages: [{ role: "user", content: { type: "text", text: colour } }] }),
    );
    mcp.registerResource("note", "test://note", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "a note" }],
    }));
    mcp.registerResource(
      "item",
      new ResourceTemplate("test://item/{id}", {
        list: undefined,
        complete: { id: (value) => ["101", "102", "201"].filter((id) => id.startsWith(value)) },
      }),
      { mimeType: "application/json" },
      async (uri, { id }) => ({
        contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id }) }],
      }),
    );
    mcp.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      upstream.subscribes.push(request.params.uri);
      return {};
    });
    mcp.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      upstream.unsubscribes.push(request.params.uri);
      return {};
    });
    mcp.registerTool("ask", ro, async (_args, extra) => {
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: "Your name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          },
        },
        ElicitResultSchema,
      );
      return {
        content: [{ type: "text", text: `${answer.action}:${JSON.stringify(answer.content ?? {})}` }],
      };
    });
    mcp.registerTool("sample", ro, async (_args, extra) => {
      const answer = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: { messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 10 },
        },
        CreateMessageResultSchema,
      );
      const content = answer.content as { type: string; text?: string };
      return { content: [{ type: "text", text: `model said ${content.text}` }] };
    });
    mcp.registerTool("work", ro, async (_args, extra) => {
      const token = extra._meta?.progressToken;
      for (const step of [1, 2, 3]) {
        await mcp.server.sendLoggingMessage(
          { level: step === 2 ? "debug" : "info", data: `step ${step}` },
          extra.sessionId,
        );
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: step, total: 3 },
          });
        }
      }
      return { content: [{ type: "text", text: "worked" }] };
    });
    upstream.server = () => mcp;
    return mcp;
  };
  return { upstream, build };
}

/**
 * A runtime over the upstream through the real `ServerPool`, its ledger in memory.
 * @param manifests the source manifests (none: the server's derived one)
 */
export async function surfaceRuntime(manifests: SourceManifestInput[] = []): Promise<{
  governance: Governance;
  ledger: MemoryLedger;
  upstream: Upstream;
  /** The ledger's rows, of one tool (a method of the surface) when given. */
  rows: (toolId?: string) => Promise<InvocationRecord[]>;
}> {
  const { upstream, build } = createUpstream();
  const ledger = new MemoryLedger();
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-surface-manifests-"));
  for (const manifest of manifests) writeFileSync(join(dir, `${manifest.id}.json`), JSON.stringify(manifest));
  const governance = await createGovernance({
    env: {},
    config: { mcpServers: { up: { type: "http", url: "http://127.0.0.1:9/unused" } } },
    manifests: { builtin: false, dirs: [dir] },
    mcp: {
      createTransport: async () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await build().connect(serverSide);
        return clientSide;
      },
      sampling: { declare: true },
    },
    storage: { ledger, contentStore: new MemoryContentStore() },
  });
  const rows = async (toolId?: string): Promise<InvocationRecord[]> =>
    (await ledger.query({})).filter((row) => toolId === undefined || row.toolId === toolId);
  return { governance, ledger, upstream, rows };
}

/** A manifest for `up` with a surface policy (its tools as the server offers them). */
export function upManifest(surface: SourceManifestInput["surface"]): SourceManifestInput {
  const schema = { type: "object" as const, properties: {} };
  return makeSource({
    id: "up",
    surface,
    tools: ["ask", "sample", "work"].map((id) => makeTool({ id, inputSchema: schema })),
  });
}

/**
 * A real SDK client of the gateway with the given capabilities.
 * @param gateway the gateway
 * @param capabilities what the client declares (its handlers are set by the caller)
 */
export async function surfaceClient(
  gateway: GatewayServer,
  capabilities: ClientCapabilities = {},
  setup: (client: Client) => void = () => {},
): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  const client = new Client({ name: "surface-test-client", version: "1.0.0" }, { capabilities });
  setup(client);
  await client.connect(clientSide);
  return client;
}
