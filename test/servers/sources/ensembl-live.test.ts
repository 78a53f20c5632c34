/**
 * Opt-in smoke test of the real Ensembl REST API: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/ensembl-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live Ensembl (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["ensembl"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "ensembl-live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("ensembl_lookup_gene finds BRAF by symbol as ENSG00000157764 on chromosome 7", async () => {
    const result = okResult(
      (await client.callTool({
        name: "ensembl_lookup_gene",
        arguments: { gene: "BRAF", species: "human", include_transcripts: false },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "ENSG00000157764",
      contentScope: "structured-record",
      structuredData: { symbol: "BRAF", location: { seqRegion: "7" } },
    });
    expectUrlsOnManifestHosts(result, "ensembl");
  }, 60_000);
});
