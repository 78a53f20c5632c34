/**
 * Opt-in smoke test against the real UniProt REST API: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/uniprot-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live UniProt (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["uniprot"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("uniprot_search finds reviewed human BRAF with its total", async () => {
    const result = okResult(
      (await client.callTool({
        name: "uniprot_search",
        arguments: { query: "gene:BRAF", organism_id: 9606, reviewed_only: true, max_results: 1 },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "P15056",
      structuredData: { entryName: "BRAF_HUMAN", reviewed: true },
    });
    expect(result.data?.total).toBeGreaterThanOrEqual(1);
    expectUrlsOnManifestHosts(result, "uniprot");
  }, 60_000);
});
