import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { readUpstreamError } from "../../../src/contract/upstream-error.js";
import { isGovernanceError } from "../../../src/core/errors.js";
import { ProviderError } from "../../../src/servers/sources/provider-error.js";
import { defineTool, type SourceModule } from "../../../src/servers/sources/source-module.js";
import {
  createSourcesServer,
  type SourcesServerOptions,
} from "../../../src/servers/sources/sources-server.js";
import { ManualClock } from "../../../src/testing/manual-clock.js";
import { okResult, REPO_ROOT } from "./sources-harness.js";

const echo = defineTool({
  id: "echo",
  title: "Echo",
  description: "Echoes",
  inputShape: { word: z.string() },
  async run(input, { now }) {
    return { records: [], data: { word: input.word, now: now() } };
  },
});
const failing = defineTool({
  id: "fail",
  title: "Fail",
  description: "Fails",
  inputShape: { kind: z.enum(["provider", "bug"]) },
  async run(input) {
    if (input.kind === "provider") throw new ProviderError("not_open_access", "Closed.", { status: 200 });
    throw new TypeError("secret input text");
  },
});
const testSource: SourceModule = {
  id: "test-src",
  attribution: "Test attribution",
  license: "CC0-1.0",
  endpoints: [{ key: "api", defaultBaseUrl: "https://api.example.org" }],
  tools: [echo, failing],
};

async function connect(options: SourcesServerOptions) {
  const server = createSourcesServer(options);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "1" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const ISSUE_TOOLS: Record<string, string[]> = {
  pubmed: ["search", "fetch_abstracts", "find_related", "prepare_paper_download"],
  arxiv: ["search", "lookup", "prepare_paper_download"],
  "europe-pmc": ["search", "prepare_paper_download"],
  biorxiv: ["search_preprints", "lookup_doi", "prepare_paper_download"],
  medrxiv: ["search_preprints", "lookup_doi", "prepare_paper_download"],
  chembl: ["search_molecules", "search_targets", "search_activities", "similarity_search", "get_mechanisms"],
  uniprot: ["search", "lookup", "prepare_sequence"],
  pdb: ["search_structures", "lookup_structure", "prepare_structure_download"],
  ensembl: ["lookup_gene", "lookup_transcript", "overlap_region", "variant_consequence"],
  reactome: ["search_pathways", "lookup_pathway", "enrichment"],
  clinvar: ["search_variants", "lookup_accession", "get_assertions"],
  geo: ["search_studies", "lookup_accession", "list_files", "prepare_dataset_download"],
};

describe("createSourcesServer", () => {
  test("registers every source's tools as <sourceId>_<toolId>; only selects sources", async () => {
    const all = await connect({ env: {} });
    const names = (await all.listTools()).tools.map((t) => t.name);
    // The tool list of issue 4, source by source, in registration order.
    const expected = Object.entries(ISSUE_TOOLS).flatMap(([source, tools]) =>
      tools.map((t) => `${source}_${t}`),
    );
    expect(names).toEqual(expected);
    const onlyArxiv = await connect({ env: {}, only: ["arxiv"] });
    expect((await onlyArxiv.listTools()).tools.map((t) => t.name)).toEqual([
      "arxiv_search",
      "arxiv_lookup",
      "arxiv_prepare_paper_download",
    ]);
  });

  test.each([
    ["an unknown source in only", { only: ["nope"] }, "UNKNOWN_ID", "nope"],
    [
      "a bad base URL",
      { env: { SCIENCEGATE_ARXIV_BASE_URL: "not a url" } },
      "INVALID_CONFIG",
      "SCIENCEGATE_ARXIV_BASE_URL",
    ],
    [
      "a bad timeout",
      { env: { SCIENCEGATE_HTTP_TIMEOUT_MS: "-5" } },
      "INVALID_CONFIG",
      "SCIENCEGATE_HTTP_TIMEOUT_MS",
    ],
  ])("%s fails at creation with %s", (_name, options, code, mentioned) => {
    const error = thrown(() => createSourcesServer({ env: {}, ...options }));
    expect(isGovernanceError(error) && error.code).toBe(code);
    expect((error as Error).message).toContain(mentioned);
  });

  test("a result carries the source identity, attribution, licence and the injected clock's time", async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 30, 0));
    const client = await connect({ env: {}, modules: [testSource], clock });
    const result = okResult(
      (await client.callTool({ name: "test-src_echo", arguments: { word: "hi" } })) as CallToolResult,
    );
    expect(result).toEqual({
      records: [],
      warnings: [],
      data: { word: "hi", now: Date.UTC(2026, 2, 1, 9, 30, 0) },
      attribution: "Test attribution",
      license: "CC0-1.0",
      retrievedAt: "2026-03-01T09:30:00.000Z",
      sourceId: "test-src",
      toolId: "echo",
      untrusted: true,
    });
  });

  test("a ProviderError becomes a structured error result", async () => {
    const client = await connect({ env: {}, modules: [testSource] });
    const result = (await client.callTool({
      name: "test-src_fail",
      arguments: { kind: "provider" },
    })) as CallToolResult;
    expect(readUpstreamError(result)).toEqual({ code: "not_open_access", message: "Closed.", status: 200 });
  });

  test("a bug becomes an unstructured error naming the tool, without the error's text", async () => {
    const client = await connect({ env: {}, modules: [testSource] });
    const result = (await client.callTool({
      name: "test-src_fail",
      arguments: { kind: "bug" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(readUpstreamError(result)).toBeUndefined();
    expect(result.content).toEqual([{ type: "text", text: "Internal error in test-src_fail (TypeError)." }]);
  });

  test("arguments that fail the zod schema are rejected before the tool runs", async () => {
    // A dead loopback port: should validation ever let this through, no real provider is called.
    const client = await connect({
      env: { SCIENCEGATE_PUBMED_BASE_URL: "http://127.0.0.1:9" },
      only: ["pubmed"],
    });
    const pmids = Array.from({ length: 51 }, (_, i) => String(i + 1));
    const result = (await client.callTool({
      name: "pubmed_fetch_abstracts",
      arguments: { pmids },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/validation/i);
  });
});

test("runSourcesServerStdio serves the tools over stdio in a child process", async () => {
  const script = [
    'import { runSourcesServerStdio } from "./src/servers/sources/sources-server.ts";',
    'await runSourcesServerStdio({ only: ["arxiv"] });',
  ].join("\n");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "--input-type=module", "-e", script],
    cwd: REPO_ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "stdio-test", version: "1" });
  await client.connect(transport);
  try {
    expect(client.getServerVersion()?.name).toBe("sciencegate-sources");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "arxiv_search",
      "arxiv_lookup",
      "arxiv_prepare_paper_download",
    ]);
  } finally {
    await client.close();
  }
});
