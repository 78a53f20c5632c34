/**
 * What the gateway adds per proxied method: an MCP SDK `Client` calls one upstream `McpServer`
 * directly, and the same kind of client calls it through the gateway (`createGatewayServer` over the
 * real `ServerPool`), both over `InMemoryTransport` so the difference is the gateway's own work
 * (governance, ledger row, forwarding) and not a process or network hop. Calls alternate in blocks;
 * p50/p90 over `ITERATIONS` calls per method and path, printed as a table with the added time and the
 * ratio. The ledger and content store are in memory (a file ledger adds its commit).
 *
 * Usage: `npx tsx bench/gateway-surface-latency.ts` (`BENCH_ITERATIONS=N` to change the 300 calls)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { createGatewayServer } from "../src/gateway/index.js";
import { MemoryContentStore } from "../src/governance/audit/content-store.js";
import { MemoryLedger } from "../src/governance/audit/memory-ledger.js";
import { createGovernance } from "../src/runtime/create-governance.js";
import { measureInterleaved, summarizeLatencies } from "./lib/latency.js";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 50;

function upstream(): McpServer {
  const mcp = new McpServer({ name: "up", version: "1.0.0" });
  mcp.registerTool(
    "echo",
    { inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  mcp.registerPrompt("greet", { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Hello, ${who}!` } }],
  }));
  mcp.registerPrompt(
    "pick",
    {
      argsSchema: {
        colour: completable(z.string(), (v) => ["red", "rose", "blue"].filter((c) => c.startsWith(v))),
      },
    },
    ({ colour }) => ({ messages: [{ role: "user", content: { type: "text", text: colour } }] }),
  );
  mcp.registerResource("note", "test://note", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "a note of some length ".repeat(20) }],
  }));
  return mcp;
}

async function connected(connect: (transport: InMemoryTransport) => Promise<unknown>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connect(serverSide);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

async function main(): Promise<void> {
  const direct = await connected((transport) => upstream().connect(transport));
  const governance = await createGovernance({
    env: {},
    config: { mcpServers: { up: { type: "http", url: "http://127.0.0.1:9/unused" } } },
    manifests: { builtin: false },
    mcp: {
      createTransport: async () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await upstream().connect(serverSide);
        return clientSide;
      },
    },
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
  });
  const gateway = createGatewayServer({ governance, eager: true, toolNames: "upstream" });
  const through = await connected((transport) => gateway.connect(transport));
  const methods: Record<string, (client: Client, i: number) => Promise<unknown>> = {
    "tools/call": (client, i) => client.callTool({ name: "echo", arguments: { text: `call ${i}` } }),
    "prompts/get": (client, i) => client.getPrompt({ name: "greet", arguments: { who: `n${i}` } }),
    "resources/read": (client) => client.readResource({ uri: "test://note" }),
    "completion/complete": (client) =>
      client.complete({
        ref: { type: "ref/prompt", name: "pick" },
        argument: { name: "colour", value: "r" },
      }),
  };
  const rows: string[] = [];
  for (const [method, call] of Object.entries(methods)) {
    const samples = await measureInterleaved(
      [
        { name: "direct", call: (i) => call(direct, i) },
        { name: "gateway", call: (i) => call(through, i) },
      ],
      { warmup: WARMUP, iterations: ITERATIONS, blockSize: 50 },
    );
    const d = summarizeLatencies(samples.get("direct") ?? []);
    const g = summarizeLatencies(samples.get("gateway") ?? []);
    rows.push(
      `${method.padEnd(20)} ${d.p50.toFixed(3).padStart(8)} ${g.p50.toFixed(3).padStart(8)} ${(g.p50 - d.p50).toFixed(3).padStart(8)} ${(g.p50 / d.p50).toFixed(1).padStart(6)}x   p90 ${d.p90.toFixed(3)} / ${g.p90.toFixed(3)}`,
    );
  }
  console.log(
    `${ITERATIONS} calls per method and path (ms, in process, in-memory ledger), ${process.version}`,
  );
  console.log(
    `${"method".padEnd(20)} ${"direct".padStart(8)} ${"gateway".padStart(8)} ${"added".padStart(8)} ${"ratio".padStart(7)}`,
  );
  for (const row of rows) console.log(row);
  await through.close();
  await direct.close();
  await gateway.close();
  await governance.close();
}

await main();
