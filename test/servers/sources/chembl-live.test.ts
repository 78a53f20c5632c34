/**
 * Opt-in smoke test of the real ChEMBL web services: a search and a mechanism lookup. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/chembl-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live ChEMBL (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["chembl"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "chembl-live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("chembl_search_molecules finds aspirin as CHEMBL25", async () => {
    const result = okResult(
      (await client.callTool({
        name: "chembl_search_molecules",
        arguments: { query: "aspirin", max_results: 5 },
      })) as CallToolResult,
    );
    expect(result.records.map((r) => r.identifier)).toContain("CHEMBL25");
    expect(result.records.find((r) => r.identifier === "CHEMBL25")).toMatchObject({
      title: "ASPIRIN",
      contentScope: "structured-record",
      structuredData: { standardInchiKey: "BSYNRYMUTXBXSQ-UHFFFAOYSA-N" },
    });
    expectUrlsOnManifestHosts(result, "chembl");
  }, 60_000);

  test("chembl_get_mechanisms gives pembrolizumab's PD-1 mechanism citing the compound page", async () => {
    const result = okResult(
      (await client.callTool({
        name: "chembl_get_mechanisms",
        arguments: { molecule: "CHEMBL3137343" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      url: "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL3137343",
      structuredData: { actionType: "INHIBITOR", targetChemblId: "CHEMBL3307223" },
    });
    expectUrlsOnManifestHosts(result, "chembl");
  }, 60_000);
});
