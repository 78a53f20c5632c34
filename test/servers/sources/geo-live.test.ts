/**
 * Opt-in smoke test of the real GEO source through NCBI: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/geo-live.test.ts` (set NCBI_EMAIL to identify yourself).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

describe.skipIf(!process.env.SCIENCEGATE_LIVE)("live GEO (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["geo"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "geo-live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("geo_lookup_accession looks up GSE236084 with its summary and PubMed link", async () => {
    const result = okResult(
      (await client.callTool({
        name: "geo_lookup_accession",
        arguments: { accession: "GSE236084" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({ identifier: "GSE236084", identifierType: "gse" });
    expect(result.records[0]?.crossReferences.map((x) => x.identifier)).toContain("39743589");
    expectUrlsOnManifestHosts(result, "geo");
  }, 60_000);
});
