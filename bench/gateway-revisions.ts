/**
 * Latency per call through the gateway for each protocol revision and transport, side by side in one
 * run: the SDK 1.x client on a 2025-11-25 session and the SDK v2 client pinned to 2026-07-28
 * (stateless requests), each over loopback HTTP and over stdio. Stdio is the gateway's `connectStdio`
 * (the `serveStdio` entry the CLI runs) on an in-process pipe framed by the SDKs' stdio transports: the
 * framing and the entry, not a process boundary. Same gateway, same in-memory upstream tool, a
 * distinct query per call (no cache hit), the four clients interleaved in blocks of 25 calls.
 * Run: `npx tsx bench/gateway-revisions.ts` (N=calls per client).
 */
import { PassThrough } from "node:stream";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport as StdioPipeV1 } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StdioServerTransport as StdioPipeV2 } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { createGatewayServer, serveGatewayHttp } from "../src/gateway/index.js";
import { createTestGovernance } from "../src/testing/create-test-governance.js";
import { demoResult } from "../test/governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../test/governance/manifests/manifest-factory.js";

const N = Number(process.env.N ?? 300);
const WARMUP = 50;
const BLOCK = 25;

const upstream = new McpServer({ name: "lab", version: "1.0.0" });
upstream.registerTool("search", { inputSchema: { query: z.string() } }, async ({ query }) => {
  const result = demoResult("search", [query.replace(/\W/g, "") || "x"], { sourceId: "lab" });
  const records = result.records.map((record) => ({ ...record, source: "lab" }));
  return { content: [{ type: "text", text: JSON.stringify({ ...result, records }) }] };
});
const { governance } = await createTestGovernance({
  servers: { lab: upstream },
  manifests: [makeSource({ id: "lab", tools: [makeTool({ id: "search" })] })],
});
const gateway = createGatewayServer({ governance, eager: true });
const http = await serveGatewayHttp(gateway);

const v1 = new Client({ name: "bench-v1", version: "1" });
await v1.connect(new StreamableHTTPClientTransport(new URL(http.url)));
const v2 = new ClientV2(
  { name: "bench-v2", version: "1" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
await v2.connect(new HttpV2(new URL(http.url)));

/** A stdio pipe to the gateway: the client reads what would be the process's stdout, writes its stdin. */
function pipe() {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const connection = gateway.connectStdio({ stdin: toGateway, stdout: fromGateway });
  return { reads: fromGateway, writes: toGateway, connection };
}
const pipeV1 = pipe();
const v1Stdio = new Client({ name: "bench-v1-stdio", version: "1" });
await v1Stdio.connect(new StdioPipeV1(pipeV1.reads, pipeV1.writes));
const pipeV2 = pipe();
const v2Stdio = new ClientV2(
  { name: "bench-v2-stdio", version: "1" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
await v2Stdio.connect(new StdioPipeV2(pipeV2.reads, pipeV2.writes));
if (pipeV1.connection.revision() !== "2025-11-25" || pipeV2.connection.revision() !== "2026-07-28") {
  throw new Error("the stdio pipes did not settle on their revisions");
}

let n = 0;
const clients = {
  "http  2025-11-25 session (SDK 1.x)": (q: string) =>
    v1.callTool({ name: "mcp__lab__search", arguments: { query: q } }),
  "http  2026-07-28 stateless (SDK v2 pinned)": (q: string) =>
    v2.callTool({ name: "mcp__lab__search", arguments: { query: q } }),
  "stdio 2025-11-25 session (SDK 1.x)": (q: string) =>
    v1Stdio.callTool({ name: "mcp__lab__search", arguments: { query: q } }),
  "stdio 2026-07-28 stateless (SDK v2 pinned)": (q: string) =>
    v2Stdio.callTool({ name: "mcp__lab__search", arguments: { query: q } }),
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(clients).map((k) => [k, []]));
for (const call of Object.values(clients)) for (let i = 0; i < WARMUP; i++) await call(`warm ${n++}`);
for (let done = 0; done < N; done += BLOCK) {
  for (const [name, call] of Object.entries(clients)) {
    for (let i = 0; i < BLOCK; i++) {
      const start = performance.now();
      const result = await call(`q ${n++}`);
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      samples[name]?.push(performance.now() - start);
    }
  }
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? NaN;
for (const [name, xs] of Object.entries(samples)) {
  console.log(
    `${name}: n=${xs.length} p50=${pct(xs, 0.5).toFixed(2)} ms p90=${pct(xs, 0.9).toFixed(2)} ms p99=${pct(xs, 0.99).toFixed(2)} ms`,
  );
}
await v1.close();
await v2.close();
await v1Stdio.close();
await v2Stdio.close();
await pipeV1.connection.close();
await pipeV2.connection.close();
await http.close();
await gateway.close();
await governance.close();
