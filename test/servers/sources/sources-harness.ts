/** Test harness: a real MCP client linked in memory to the sources server, which talks to a fake provider. */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import type { ArtifactCandidate, McpRecord, McpToolResult } from "../../../src/contract/result-types.js";
import { readUpstreamError, type UpstreamError } from "../../../src/contract/upstream-error.js";
import { normalizeToolResult } from "../../../src/governance/envelope/envelope.js";
import {
  createSourcesServer,
  type SourcesServerOptions,
} from "../../../src/servers/sources/sources-server.js";
import {
  type FakeProviderServer,
  type FakeRoute,
  providerEnvFor,
  startFakeProviderServer,
} from "../../../src/testing/fake-provider-server.js";

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** Real provider samples shared next to the repository (absent in some checkouts). */
export const SHARED_PROVIDER_SAMPLES = path.resolve(REPO_ROOT, "../shared/fixtures/providers");
/** Real provider answers of the second fidelity review, shared beside them (origins in its SOURCES.md). */
export const SHARED_FIDELITY_SAMPLES = path.resolve(REPO_ROOT, "../shared/fixtures/fidelity3");

/**
 * A shared sample folder, and the suffix a test title carries when it is absent (the tests skip, visibly).
 * @param folder the folder's absolute path
 * @returns whether it exists, and the suffix (`""` when it does)
 */
export function sharedSamples(folder: string): { has: boolean; suffix: string } {
  const has = existsSync(folder);
  return { has, suffix: has ? "" : ` (SKIPPED: ${folder} not found)` };
}

/** A connected client, server and fake provider. */
export interface SourcesHarness {
  provider: FakeProviderServer;
  client: Client;
  /** Calls an MCP tool and returns the raw result. */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Starts a fake provider with `routes` and a sources server whose base URLs point at it.
 * @param routes the fake provider routes
 * @param options extra server options (env entries are added to the provider env)
 * @returns the harness
 */
export async function startSourcesHarness(
  routes: FakeRoute[],
  options: Omit<SourcesServerOptions, "env"> & { env?: Record<string, string> } = {},
): Promise<SourcesHarness> {
  const provider = await startFakeProviderServer({ routes });
  const server = createSourcesServer({
    ...options,
    env: { ...providerEnvFor(provider.url), ...options.env },
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "sources-test", version: "1.0.0" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    provider,
    client,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await client.close();
      await server.close();
      await provider.close();
    },
  };
}

/**
 * The `McpToolResult` of a successful call; fails the test for an error result. Also checks that the text
 * block carries the same JSON as the structured content.
 * @param result the raw tool result
 * @returns the structured result
 */
export function okResult(result: CallToolResult): McpToolResult {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  const text = result.content[0];
  expect(text?.type).toBe("text");
  expect(JSON.parse(text?.type === "text" ? text.text : "null")).toEqual(result.structuredContent);
  return result.structuredContent as unknown as McpToolResult;
}

/**
 * The structured error of an error result; fails the test for a success.
 * @param result the raw tool result
 * @returns the upstream error
 */
export function errorOf(result: CallToolResult): UpstreamError {
  expect(result.isError).toBe(true);
  const error = readUpstreamError(result);
  expect(error, JSON.stringify(result.content)).toBeDefined();
  return error as UpstreamError;
}

/**
 * Reads a manifest of manifests/.
 * @param id the source id
 * @returns the parsed manifest
 */
export function readManifest(id: string): {
  id: string;
  governance: { networkHosts: string[]; attribution: string; license: string };
  tools: { id: string; mcpToolName: string; inputSchema: unknown }[];
  [key: string]: unknown;
} {
  return JSON.parse(readFileSync(path.join(REPO_ROOT, "manifests", `${id}.json`), "utf8"));
}

/**
 * Every URL a result exposes: records, citations, cross-references and artifact candidates.
 * @param result a tool result (or just its records and artifacts)
 * @returns the URLs
 */
export function resultUrls(result: { records: McpRecord[]; artifacts?: ArtifactCandidate[] }): string[] {
  return [
    ...result.records.flatMap((r) => [
      r.url,
      r.primaryCitation.url,
      ...r.citations.map((c) => c.url),
      ...r.crossReferences.flatMap((x) => (x.url ? [x.url] : [])),
    ]),
    ...(result.artifacts ?? []).map((a) => a.url),
  ];
}

/**
 * Asserts that every URL of a result is HTTPS on one of the manifest's `networkHosts`, and that the broker's
 * envelope check (identity, hosts, shapes) keeps every record, cross-reference URL and candidate.
 * @param result a tool result
 * @param sourceId the manifest id
 */
export function expectUrlsOnManifestHosts(result: McpToolResult, sourceId: string): void {
  const manifest = readManifest(sourceId);
  expect(result.sourceId).toBe(manifest.id);
  expect(result.untrusted).toBe(true);
  const urls = resultUrls(result);
  expect(urls.length).toBeGreaterThan(0);
  for (const url of urls) {
    const parsed = new URL(url);
    expect(parsed.protocol, url).toBe("https:");
    expect(manifest.governance.networkHosts, url).toContain(parsed.hostname);
  }
  const checked = normalizeToolResult(
    { content: [], structuredContent: result as unknown as Record<string, unknown> },
    {
      sourceId,
      toolId: result.toolId,
      networkHosts: manifest.governance.networkHosts,
      license: manifest.governance.license,
      attribution: manifest.governance.attribution,
      now: new Date(result.retrievedAt),
    },
  );
  expect(checked.warnings).toEqual(result.warnings);
  expect(checked.records).toEqual(result.records);
  expect(checked.artifacts).toEqual(result.artifacts);
}
