/**
 * Opt-in smoke test against the real RCSB PDB Data API: one call. Run with
 * `SCIENCEGATE_LIVE=1 npx vitest run test/servers/sources/pdb-live.test.ts`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createSourcesServer } from "../../../src/servers/sources/sources-server.js";
import { expectUrlsOnManifestHosts, okResult } from "./sources-harness.js";

const isLive = process.env.SCIENCEGATE_LIVE === "1";

describe.skipIf(!isLive)("live RCSB PDB (opt-in: SCIENCEGATE_LIVE=1)", () => {
  let client: Client;
  beforeAll(async () => {
    const server = createSourcesServer({ env: process.env, only: ["pdb"] });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "live-smoke", version: "1.0.0" });
    await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  });
  afterAll(() => client?.close());

  test("pdb_lookup_structure reads 4HHB through its extended id", async () => {
    const result = okResult(
      (await client.callTool({
        name: "pdb_lookup_structure",
        arguments: { id: "pdb_00004hhb" },
      })) as CallToolResult,
    );
    expect(result.records[0]).toMatchObject({
      identifier: "4HHB",
      year: 1984,
      structuredData: { experimentalMethods: ["X-RAY DIFFRACTION"], pdbFormatAvailable: true },
    });
    expectUrlsOnManifestHosts(result, "pdb");
  }, 60_000);
});
