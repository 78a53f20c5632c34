/**
 * Opt-in smoke tests against the real providers: one call per source. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/live.test.ts` (set NCBI_EMAIL to identify yourself).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live providers (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  const call = async (name: string, args: Record<string, unknown>) =>
    okResult((await client.callTool({ name, arguments: args })) as CallToolResult);

  test("pubmed_search finds the trametinib trial with its abstract", async () => {
    const result = await call("pubmed_search", { query: "22663011[uid]", max_results: 1 });
    expect(result.records[0]).toMatchObject({ identifier: "22663011", contentScope: "abstract" });
    expectUrlsOnManifestHosts(result, "pubmed");
  }, 60_000);

  test("arxiv_lookup finds 1605.08386", async () => {
    const result = await call("arxiv_lookup", { ids: ["arXiv:1605.08386v1"] });
    expect(result.records[0]).toMatchObject({
      identifier: "1605.08386",
      title: "Heat-bath random walks with Markov bases",
    });
    expectUrlsOnManifestHosts(result, "arxiv");
  }, 60_000);
});
