/**
 * A governance runtime (`createTestGovernance`) over one in-memory MCP server (`lab`), and real SDK
 * clients connected to a gateway over it through `InMemoryTransport`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Clock } from "../../src/core/index.js";
import type { GatewayConnectOptions, GatewayServer, GatewaySession } from "../../src/gateway/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { createTestGovernance } from "../../src/testing/create-test-governance.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";

/** The lab server's counters and levers. */
export interface Lab {
  governance: Governance;
  /** Calls per upstream tool. */
  calls: Record<string, number>;
  /** Settles when an upstream `slow` call starts. */
  slowStarted: Promise<void>;
  /** Settles when an upstream `slow` call is aborted (the client's cancellation reached the server). */
  slowAborted: Promise<void>;
  /** Offers `late`, which the manifest lists but the server did not offer at first (sends list_changed). */
  addLateTool(): void;
  /** Changes `search`'s description, so its definition hash changes (sends list_changed). */
  changeSearch(): void;
}

/**
 * A runtime with source `lab`: `search`, `lookup` and `slow` (read-only), `write` (not read-only, so
 * dangerous), and `late` (in the manifest, offered by the server only after `addLateTool()`).
 * @param options the runtime's clock (the system clock unless given), its quotas (`parseQuotaRules`)
 */
export async function createLab(options: { clock?: Clock; quotas?: string } = {}): Promise<Lab> {
  const calls: Record<string, number> = {};
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  let slowStarted!: () => void;
  let slowAborted!: () => void;
  const started = new Promise<void>((resolve) => {
    slowStarted = resolve;
  });
  const aborted = new Promise<void>((resolve) => {
    slowAborted = resolve;
  });
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  const inputSchema = { query: z.string(), limit: z.number().int().optional() };
  const answer = (name: string, query: string) => {
    count(name);
    const demo = demoResult(name, [query.replace(/\W/g, "") || "x"], { sourceId: "lab" });
    const result = { ...demo, records: demo.records.map((record) => ({ ...record, source: "lab" })) };
    return {
      content: [{ type: "text" as const, text: JSON.stringify(result) }],
      structuredContent: result as never,
    };
  };
  const search: RegisteredTool = server.registerTool(
    "search",
    { description: "Searches the lab.", inputSchema },
    async ({ query }) => answer("search", query),
  );
  for (const name of ["lookup", "write"]) {
    server.registerTool(name, { inputSchema }, async ({ query }) => answer(name, query));
  }
  server.registerTool("slow", { inputSchema }, async (_args, extra) => {
    count("slow");
    slowStarted();
    await new Promise<void>((resolve) => {
      extra.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    slowAborted();
    throw new Error("aborted by the client");
  });

  const { governance } = await createTestGovernance({
    servers: { lab: server },
    manifests: [
      makeSource({
        id: "lab",
        tools: [
          makeTool({ id: "search", routing: { keywords: ["lab"], mode: "prefer", priority: 60 } }),
          makeTool({ id: "lookup", kind: "lookup" }),
          makeTool({ id: "write", readOnly: false }),
          makeTool({ id: "slow" }),
          makeTool({ id: "late" }),
        ],
      }),
    ],
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.quotas ? { limits: { quotas: options.quotas } } : {}),
  });
  return {
    governance,
    calls,
    slowStarted: started,
    slowAborted: aborted,
    addLateTool: () => {
      server.registerTool("late", { inputSchema }, async ({ query }) => answer("late", query));
    },
    changeSearch: () => search.update({ description: "Searches the lab, version 2." }),
  };
}

/** A real SDK client of one gateway session, counting the session's `tools/list_changed` notifications. */
export interface GatewayClient {
  client: Client;
  session: GatewaySession;
  /** How many `notifications/tools/list_changed` arrived. */
  listChanged(): number;
  /** The names `tools/list` answers now. */
  toolNames(): Promise<string[]>;
}

/**
 * Connects a new SDK client to the gateway through an in-memory transport pair.
 * @param gateway the gateway
 * @param options the session id
 */
export async function connectClient(
  gateway: GatewayServer,
  options: GatewayConnectOptions = {},
): Promise<GatewayClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = await gateway.connect(serverSide, options);
  const client = new Client({ name: "gateway-test-client", version: "1.0.0" });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  await client.connect(clientSide);
  return {
    client,
    session,
    listChanged: () => changes,
    toolNames: async () => (await client.listTools()).tools.map((tool) => tool.name),
  };
}
