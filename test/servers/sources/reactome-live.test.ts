/**
 * Opt-in smoke test of the real Reactome ContentService: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/reactome-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live Reactome (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["reactome"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "reactome-live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("reactome_lookup_pathway finds R-HSA-5673001, the RAF/MAP kinase cascade", async () => {
    const result = okResult(
      (await client.callTool({
        name: "reactome_lookup_pathway",
        arguments: { id: "R-HSA-5673001" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "R-HSA-5673001",
      title: "RAF/MAP kinase cascade",
      contentScope: "structured-record",
      structuredData: { species: "Homo sapiens" },
    });
    expectUrlsOnManifestHosts(result, "reactome");
  }, 60_000);
});
