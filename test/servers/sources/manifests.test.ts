/**
 * The manifests of the bundled sources must agree with the code: tool list, MCP names, attribution, licence,
 * hosts, and input schemas identical to what the server advertises (so the catalog never hides a tool for
 * schema drift). After changing a tool's zod input or description, regenerate the manifest's copies with
 * `SCIENCEGATE_UPDATE_MANIFESTS=1 npx vitest run test/servers/sources/manifests.test.ts`, then
 * `npx biome check --write manifests/`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { inputSchemasCompatible } from "../../../src/governance/catalog/schema-compat.js";
import { validateManifest } from "../../../src/governance/manifests/manifest-loader.js";
import { endpointEnvVars } from "../../../src/servers/sources/provider-env.js";
import { SOURCE_MODULES } from "../../../src/servers/sources/source-modules.js";
import {
  createSourcesServer,
  SOURCES_SERVER_ID,
  sourceToolName,
} from "../../../src/servers/sources/sources-server.js";
import { REPO_ROOT } from "./sources-harness.js";

const SOURCE_KEYS = [
  "id",
  "displayName",
  "description",
  "publisher",
  "version",
  "kind",
  "enabledByDefault",
  "transport",
  "cache",
  "prompt",
  "governance",
  "tools",
];
const GOVERNANCE_REQUIRED = [
  "attribution",
  "license",
  "termsUrl",
  "dataClassification",
  "networkHosts",
  "maxResponseBytes",
  "rateLimitGroup",
];
const GOVERNANCE_OPTIONAL = [
  "maxConcurrentRequests",
  "minIntervalMs",
  "rateLimitPerSecond",
  "maxQueueDepth",
  "queueTimeoutMs",
];
const TOOL_REQUIRED = [
  "id",
  "description",
  "kind",
  "mcpToolName",
  "inputSchema",
  "readOnly",
  "permission",
  "routing",
  "promptFragment",
];
const TOOL_OPTIONAL = ["cachePolicy", "retryPolicy", "timeoutMs"];

const manifestPath = (id: string) => path.join(REPO_ROOT, "manifests", `${id}.json`);
// The same conversion the MCP SDK applies to zod input schemas for tools/list.
const jsonSchemaOf = (shape: z.ZodRawShape) =>
  z.toJSONSchema(z.object(shape), { target: "draft-7", io: "input" });

if (process.env.SCIENCEGATE_UPDATE_MANIFESTS === "1") {
  for (const source of SOURCE_MODULES) {
    const manifest = JSON.parse(readFileSync(manifestPath(source.id), "utf8"));
    for (const tool of manifest.tools) {
      const live = source.tools.find((t) => t.id === tool.id);
      if (live) {
        tool.description = live.description;
        tool.inputSchema = jsonSchemaOf(live.inputShape);
      }
    }
    writeFileSync(manifestPath(source.id), `${JSON.stringify(manifest, null, 2)}\n`);
  }
}

describe.each(SOURCE_MODULES.map((source) => [source.id, source] as const))(
  "manifests/%s.json",
  (id, source) => {
    const manifest = JSON.parse(readFileSync(manifestPath(id), "utf8"));

    test("has exactly the manifest fields, served by the sources server", () => {
      expect(Object.keys(manifest).sort()).toEqual([...SOURCE_KEYS].sort());
      expect(manifest.id).toBe(source.id);
      expect(manifest.transport).toEqual({ mcpServerId: SOURCES_SERVER_ID });
      expect(Object.keys(manifest.cache).sort()).toEqual(["enabled", "ttlSeconds"]);
      expect(Object.keys(manifest.prompt).sort()).toEqual(["caveats", "citationPolicy", "summary"]);
      const governance = Object.keys(manifest.governance);
      expect(governance).toEqual(expect.arrayContaining(GOVERNANCE_REQUIRED));
      for (const key of governance) expect([...GOVERNANCE_REQUIRED, ...GOVERNANCE_OPTIONAL]).toContain(key);
      expect(manifest.governance).toMatchObject({
        maxQueueDepth: 8,
        queueTimeoutMs: 20_000,
        dataClassification: "public",
      });
    });

    test("passes the project's manifest validator", () => {
      expect(validateManifest(manifest, manifestPath(id))).toMatchObject({ ok: true });
    });

    test("attribution and licence are the ones the tools put in every result", () => {
      expect(manifest.governance.attribution).toBe(source.attribution);
      expect(manifest.governance.license).toBe(source.license);
    });

    test("networkHosts cover every default provider host", () => {
      for (const { endpoint } of endpointEnvVars(source)) {
        expect(manifest.governance.networkHosts).toContain(new URL(endpoint.defaultBaseUrl).hostname);
      }
    });

    test("lists the module's tools with their MCP names and read-only plans", () => {
      expect(manifest.tools.map((t: { id: string }) => t.id)).toEqual(source.tools.map((t) => t.id));
      for (const tool of manifest.tools) {
        for (const key of Object.keys(tool)) expect([...TOOL_REQUIRED, ...TOOL_OPTIONAL]).toContain(key);
        for (const key of TOOL_REQUIRED) expect(tool).toHaveProperty(key);
        expect(tool.mcpToolName).toBe(sourceToolName(id, tool.id));
        expect(tool.readOnly).toBe(true);
        expect(["search", "lookup", "analysis", "artifact-plan"]).toContain(tool.kind);
        expect(tool.kind === "artifact-plan").toBe(tool.id.startsWith("prepare_"));
        expect(tool.permission).toEqual({
          action: `${id}:${tool.id}`,
          resourceTemplate: `${id}:${tool.id}`,
          summaryTemplate: expect.stringMatching(/\{\w+\}/),
        });
        expect(["off", "prefer"]).toContain(tool.routing.mode);
        expect(tool.routing.priority).toBeGreaterThanOrEqual(0);
        expect(tool.routing.priority).toBeLessThanOrEqual(100);
        // Every {placeholder} of the summary is an input property.
        for (const [, name] of tool.permission.summaryTemplate.matchAll(/\{(\w+)\}/g)) {
          expect(Object.keys(tool.inputSchema.properties)).toContain(name);
        }
      }
    });

    test("input schemas are identical to the JSON Schema generated from the zod inputs", () => {
      for (const tool of source.tools) {
        const declared = manifest.tools.find((t: { id: string }) => t.id === tool.id);
        expect(declared?.inputSchema, `${id}.${tool.id}: rerun with SCIENCEGATE_UPDATE_MANIFESTS=1`).toEqual(
          jsonSchemaOf(tool.inputShape),
        );
      }
    });
  },
);

test("the live tools/list of the sources server equals the manifests' tools, descriptions and input schemas", async () => {
  const server = createSourcesServer({ env: {} });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "manifest-test", version: "1.0.0" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  const { tools } = await client.listTools();
  await client.close();
  const declared = SOURCE_MODULES.flatMap((source) =>
    JSON.parse(readFileSync(manifestPath(source.id), "utf8")).tools.map(
      (t: { mcpToolName: string; description: string; inputSchema: unknown }) => [
        t.mcpToolName,
        t.description,
        t.inputSchema,
      ],
    ),
  );
  expect(tools.map((t) => [t.name, t.description, t.inputSchema])).toEqual(declared);
  for (const [name, , schema] of declared) {
    const live = tools.find((t) => t.name === name);
    expect(inputSchemasCompatible(schema, live?.inputSchema), name).toEqual({ compatible: true });
  }
  expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
});
