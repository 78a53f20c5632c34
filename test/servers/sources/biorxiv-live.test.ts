/**
 * Opt-in smoke test against the real bioRxiv API: one DOI lookup. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/biorxiv-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

describe.skipIf(!process.env.SCIENCEGATE_LIVE)("live bioRxiv (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["biorxiv"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-biorxiv", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("biorxiv_lookup_doi finds 10.1101/339747 (the example of the API documentation)", async () => {
    const result = okResult(
      (await client.callTool({
        name: "biorxiv_lookup_doi",
        arguments: { doi: "10.1101/339747" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({ identifier: "10.1101/339747", peerReviewStatus: "preprint" });
    expectUrlsOnManifestHosts(result, "biorxiv");
  }, 60_000);
});
