/**
 * Opt-in smoke test of the real ClinVar source through NCBI: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/clinvar-live.test.ts` (set NCBI_EMAIL to identify yourself).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

describe.skipIf(!process.env.SCIENCEGATE_LIVE)("live ClinVar (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["clinvar"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "clinvar-live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("clinvar_lookup_accession looks up VCV000012624 (ABL1 T315I) with a classification", async () => {
    const result = okResult(
      (await client.callTool({
        name: "clinvar_lookup_accession",
        arguments: { accession: "VCV000012624" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "VCV000012624",
      contentScope: "structured-record",
    });
    expect(result.records[0]?.title).toContain("ABL1");
    expectUrlsOnManifestHosts(result, "clinvar");
  }, 60_000);
});
