/**
 * Opt-in smoke test against the real bioRxiv/medRxiv API for medRxiv: one DOI lookup. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/medrxiv-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

describe.skipIf(!process.env.SCIENCEGATE_LIVE)("live medRxiv (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["medrxiv"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-medrxiv", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("medrxiv_lookup_doi finds 10.1101/2020.09.09.20191205", async () => {
    const result = okResult(
      (await client.callTool({
        name: "medrxiv_lookup_doi",
        arguments: { doi: "10.1101/2020.09.09.20191205" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "10.1101/2020.09.09.20191205",
      source: "medrxiv",
      peerReviewStatus: "preprint",
    });
    expectUrlsOnManifestHosts(result, "medrxiv");
  }, 60_000);
});
