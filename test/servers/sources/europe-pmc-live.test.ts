/**
 * Opt-in smoke test against the real Europe PMC REST API: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/europe-pmc-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

describe.skipIf(!process.env.SCIENCEGATE_LIVE)("live Europe PMC (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["europe-pmc"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-europe-pmc", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("europe-pmc_search finds PMID 20516115 with its PMCID", async () => {
    const result = okResult(
      (await client.callTool({
        name: "europe-pmc_search",
        arguments: { query: "EXT_ID:20516115 AND SRC:MED", max_results: 1 },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "20516115",
      identifierType: "pmid",
      crossReferences: expect.arrayContaining([expect.objectContaining({ identifier: "PMC3040717" })]),
    });
    expectUrlsOnManifestHosts(result, "europe-pmc");
  }, 60_000);
});
