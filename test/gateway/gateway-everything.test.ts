/**
 * The real third-party `@modelcontextprotocol/server-everything` (over stdio, through the pool) behind
 * the gateway, used by a real SDK client: its prompts, resources, templates and completions arrive as
 * a direct client of the same server gets them, and each read is a ledger row.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";

const everything = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

let governance: Governance;
let gateway: GatewayServer;
let ledger: MemoryLedger;
let client: Client;
let direct: Client;

beforeAll(async () => {
  ledger = new MemoryLedger();
  governance = await createGovernance({
    env: {},
    config: { mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } } },
    manifests: { builtin: false },
    storage: { ledger, contentStore: new MemoryContentStore() },
  });
  gateway = createGatewayServer({ governance, eager: true, toolNames: "upstream" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  client = new Client({ name: "everything-through-gateway", version: "1.0.0" });
  await client.connect(clientSide);
  direct = new Client({ name: "everything-direct", version: "1.0.0" });
  await direct.connect(
    new StdioClientTransport({ command: process.execPath, args: [everything, "stdio"], stderr: "ignore" }),
  );
}, 60_000);

afterAll(async () => {
  await direct?.close();
  await gateway?.close();
  await governance?.close();
});

describe("server-everything behind the gateway", () => {
  test("prompts: the same list, and a prompt with arguments got as the server gives it", async () => {
    const through = await client.listPrompts();
    const own = await direct.listPrompts();
    expect(through.prompts).toEqual(own.prompts);
    const args = { city: "Lyon", state: "Rhône" };
    const got = await client.getPrompt({ name: "args-prompt", arguments: args });
    expect(got).toEqual(await direct.getPrompt({ name: "args-prompt", arguments: args }));
  });

  test("resources and templates: listed beside the gateway's own; a static and a templated read", async () => {
    const listed = (await client.listResources()).resources.map((resource) => resource.uri);
    const own = (await direct.listResources()).resources.map((resource) => resource.uri);
    expect(listed).toEqual(expect.arrayContaining(own));
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual(
      (await direct.listResourceTemplates()).resourceTemplates,
    );
    const uri = own[0] as string;
    expect(await client.readResource({ uri })).toEqual(await direct.readResource({ uri }));
    // The server stamps a dynamic resource with the time of the read (to the second): two reads may differ there.
    const untimed = (read: unknown) =>
      JSON.parse(JSON.stringify(read).replace(/created at [^"]*/g, "created at T"));
    const dynamic = "demo://resource/dynamic/text/3";
    const through = await client.readResource({ uri: dynamic });
    expect(JSON.stringify(through)).toContain("Resource 3: This is a plaintext resource created at ");
    expect(untimed(through)).toEqual(untimed(await direct.readResource({ uri: dynamic })));
  });

  test("completion of a prompt argument, and every read in the ledger", async () => {
    const request = {
      ref: { type: "ref/prompt" as const, name: "completable-prompt" },
      argument: { name: "department", value: "E" },
    };
    const completion = await client.complete(request);
    expect(completion).toEqual(await direct.complete(request));
    expect(completion.completion.values.length).toBeGreaterThan(0);
    const rows = await ledger.query({});
    const reads = rows.filter((row) => row.toolId.includes("/"));
    expect(new Set(reads.map((row) => row.toolId))).toEqual(
      new Set(["prompts/get", "resources/read", "completion/complete"]),
    );
    expect(reads.every((row) => row.sourceId === "everything" && row.status === "ok")).toBe(true);
  });
});
