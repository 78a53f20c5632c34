/**
 * `npx tsx examples/gateway.ts`: the governed MCP gateway embedded in an app, offline. An MCP SDK
 * `Client` (standing in for a desktop assistant or any other MCP client) talks to the gateway over an
 * in-memory transport pair; the gateway serves the runtime's governed tools, so the client's call goes
 * through the broker (validation, permission, cache, rate limits) and leaves one ledger row, exactly as a
 * call from a LangGraph executor does. The bundled sources server runs as a real stdio child against the
 * loopback stand-ins of ./offline/providers.ts.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createGovernance } from "sciencegate";
import { createGatewayServer } from "sciencegate/gateway";
import { startOfflineProviders } from "./offline/providers.js";

const providers = await startOfflineProviders();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-gateway-")) },
});
// `eager: true` lists every enabled tool at once; the default lists `tool_search` and loads tools on demand.
const gateway = createGatewayServer({ governance, eager: true });

try {
  const [clientSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(gatewaySide, { sessionId: "desk-1" });
  const client = new Client({ name: "example-client", version: "1.0.0" });
  await client.connect(clientSide);

  const { tools } = await client.listTools();
  console.log(
    `tools listed: ${tools.some((t) => t.name === "mcp__pubmed__search") ? "mcp__pubmed__search, …" : "?"}`,
  );

  const result = await client.callTool({
    name: "mcp__pubmed__search",
    arguments: { query: "crispr base editing", max_results: 2 },
  });
  const text =
    (result.content as { type: string; text?: string }[]).find((c) => c.type === "text")?.text ?? "";
  for (const line of text.split("\n").filter((l) => l.includes("[PMID:")))
    console.log(`result: ${line.trim()}`);

  await client.close();
  for (const row of await governance.ledger.query({ sessionId: "desk-1" })) {
    console.log(`ledger: ${row.sourceId}/${row.toolId} ${row.status}`);
  }
} finally {
  await gateway.close();
  await governance.close();
  await providers.server.close();
}
