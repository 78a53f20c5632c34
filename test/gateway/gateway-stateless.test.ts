/**
 * The gateway serves 2026-07-28 clients (stateless requests) and 2025-11-25 clients side by side on
 * one HTTP endpoint: the SDK v2 client pinned to 2026-07-28, in `auto` mode, and the 1.x client;
 * `tool_search`, tools, an approval (a multi-round-trip request for 2026-07-28, elicitation for
 * 2025-11-25), and each attack on the approval's `requestState` refused with nothing run.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { Clock } from "../../src/core/index.js";
import {
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { createLab, type Lab } from "./gateway-harness.js";

const WRITE = "mcp__lab__write";
const allow = (decision: string) => ({ action: "accept", content: { decision } }) as const;

let lab: Lab;
let gateway: GatewayServer;
let http: GatewayHttpServer;
/** The system clock, moved forward by the test that needs an expired state. */
const clock = {
  skewMs: 0,
  now() {
    return Date.now() + this.skewMs;
  },
} as Clock & { skewMs: number };
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  lab = await createLab();
  gateway = createGatewayServer(lab.governance, { clock });
  http = await serveGatewayHttp(gateway);
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
});

/** A v2 client; `answer` answers the gateway's approval form (auto mode of the SDK). */
async function v2Client(
  mode: "pin" | "auto",
  options: { conversation?: string; answer?: () => unknown; manual?: boolean } = {},
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "v2-test", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: mode === "pin" ? { pin: "2026-07-28" } : "auto" },
      ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  client.setRequestHandler(
    "elicitation/create",
    async () => (options.answer ?? (() => allow("allow_once")))() as never,
  );
  const headers: Record<string, string> = options.conversation
    ? { "Sciencegate-Conversation": options.conversation }
    : {};
  await client.connect(new HttpV2(new URL(http.url), { requestInit: { headers } }));
  closers.push(() => client.close());
  return client;
}

const textOf = (result: { content?: unknown }) =>
  ((result.content as { type: string; text?: string }[] | undefined) ?? [])
    .map((block) => block.text ?? "")
    .join("\n");

async function promoteWrite(client: ClientV2): Promise<void> {
  await client.callTool({ name: "tool_search", arguments: { query: `select:${WRITE}` } });
}

describe("a 2026-07-28 client", () => {
  test("pinned: server/discover, tools, tool_search, and an approval as a multi-round-trip request", async () => {
    const asked: unknown[] = [];
    const client = await v2Client("pin", {
      conversation: "pinned-1",
      answer: () => {
        asked.push(1);
        return allow("allow_once");
      },
    });
    expect(client.getProtocolEra()).toBe("modern");
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("tool_search");
    expect(names).not.toContain(WRITE);
    await promoteWrite(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(WRITE);
    const before = lab.calls.write ?? 0;
    const result = await client.callTool({ name: WRITE, arguments: { query: "pinned" } });
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(lab.calls.write).toBe(before + 1);
  });
});
