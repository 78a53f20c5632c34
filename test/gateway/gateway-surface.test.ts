/**
 * The upstream server's whole surface through the gateway, governed: prompts, resources, templates,
 * subscriptions, completion and log level forwarded to real SDK clients, each read a ledger row, each
 * part under its manifest's `surface` policy (denied, approval asked by elicitation, audited with the
 * answer stored); and what the upstream asks during a tool call (elicitation, sampling) or tells
 * (progress, log messages) relayed to the gateway's client.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import type { SourceManifestInput } from "../../src/governance/manifests/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { until } from "../governance/rate-limit/rate-limit-conformance.js";
import { surfaceClient, surfaceRuntime, upManifest } from "./gateway-surface-harness.js";

let governance: Governance | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await governance?.close();
  gateway = undefined;
  governance = undefined;
});

async function setup(manifests: SourceManifestInput[] = []) {
  const runtime = await surfaceRuntime(manifests);
  governance = runtime.governance;
  gateway = createGatewayServer({ governance: runtime.governance, eager: true, toolNames: "upstream" });
  return { ...runtime, gateway };
}

describe("the upstream surface through the gateway", () => {
  test("prompts are listed and got as the server gives them, each get a ledger row", async () => {
    const t = await setup();
    const client = await surfaceClient(t.gateway);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["greet", "pick"]);
    const got = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(got.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }]);
    await expect(client.getPrompt({ name: "nope" })).rejects.toThrow(/-32602/);
    const [row] = await t.rows("prompts/get");
    expect(row).toMatchObject({ sourceId: "up", mcpToolName: "greet", status: "ok", attempts: 1 });
    expect(row?.requestRef).toMatch(/^sha256:/);
    // `allowed` keeps no answer, and lists are not rows.
    expect(row?.normalizedRef).toBeUndefined();
    expect(await t.rows("prompts/list")).toEqual([]);
  });

  test("resources and templates are listed beside the gateway's own, read through, each read a row", async () => {
    const t = await setup();
    const client = await surfaceClient(t.gateway);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toContain("test://note");
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["test://item/{id}"]);
    const note = await client.readResource({ uri: "test://note" });
    expect(note.contents).toEqual([{ uri: "test://note", mimeType: "text/plain", text: "a note" }]);
    const item = await client.readResource({ uri: "test://item/7" });
    expect(item.contents[0]).toMatchObject({ text: '{"id":"7"}' });
    await expect(client.readResource({ uri: "test://missing" })).rejects.toThrow();
    const reads = await t.rows("resources/read");
    expect(reads.map((row) => [row.mcpToolName, row.status])).toEqual([
      ["test://note", "ok"],
      ["test://item/7", "ok"],
      ["test://missing", "error"],
    ]);
  });

  test("completion reaches the prompt's and the template's server; setLevel reaches the server", async () => {
    const t = await setup();
    const client = await surfaceClient(t.gateway);
    const colour = await client.complete({
      ref: { type: "ref/prompt", name: "pick" },
      argument: { name: "colour", value: "r" },
    });
    expect(colour.completion.values).toEqual(["red", "rose"]);
    const id = await client.complete({
      ref: { type: "ref/resource", uri: "test://item/{id}" },
      argument: { name: "id", value: "10" },
    });
    expect(id.completion.values).toEqual(["101", "102"]);
    await client.setLoggingLevel("warning");
    expect((await t.rows("completion/complete")).map((row) => row.mcpToolName)).toEqual([
      "pick#colour",
      "test://item/{id}#id",
    ]);
    expect((await t.rows("logging/setLevel")).map((row) => [row.mcpToolName, row.status])).toEqual([
      ["warning", "ok"],
    ]);
  });

  test("subscriptions: one upstream subscription for two sessions, updates reach the subscribers only", async () => {
    const t = await setup();
    const updates: string[][] = [[], [], []];
    const clients = await Promise.all(
      [0, 1, 2].map((i) =>
        surfaceClient(t.gateway, {}, (client) =>
          client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
            updates[i]?.push(n.params.uri);
          }),
        ),
      ),
    );
    await clients[0]?.subscribeResource({ uri: "test://note" });
    await clients[1]?.subscribeResource({ uri: "test://note" });
    expect(t.upstream.subscribes).toEqual(["test://note"]);
    await t.upstream.server().server.sendResourceUpdated({ uri: "test://note" });
    await until(() => updates[0]?.length === 1 && updates[1]?.length === 1);
    expect(updates[2]).toEqual([]);
    await clients[0]?.unsubscribeResource({ uri: "test://note" });
    expect(t.upstream.unsubscribes).toEqual([]);
    await clients[1]?.unsubscribeResource({ uri: "test://note" });
    expect(t.upstream.unsubscribes).toEqual(["test://note"]);
    expect((await t.rows("resources/subscribe")).length).toBe(2);
    expect((await t.rows("resources/unsubscribe")).length).toBe(2);
  });

  test("a list change upstream reaches every session", async () => {
    const t = await setup();
    let changed = 0;
    const client = await surfaceClient(t.gateway, {}, (c) =>
      c.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        changed++;
      }),
    );
    await client.listResources();
    t.upstream.server().server.sendResourceListChanged();
    await until(() => changed === 1);
  });
});

describe("surface policies of the manifest", () => {
  test("denied: not listed, refused, the refusal recorded", async () => {
    const t = await setup([upManifest({ resources: "denied", prompts: "denied" })]);
    const client = await surfaceClient(t.gateway);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain("test://note");
    await expect(client.getPrompt({ name: "greet", arguments: { who: "x" } })).rejects.toThrow(/-32602/);
    await expect(client.readResource({ uri: "test://note" })).rejects.toThrow();
    expect(t.upstream.levels).toEqual([]);
  });

  test("approval: each get asks the client's human; allow runs, deny and no elicitation refuse; all recorded", async () => {
    const t = await setup([upManifest({ prompts: "approval" })]);
    const questions: string[] = [];
    let decision = "allow";
    const asking = await surfaceClient(t.gateway, { elicitation: {} }, (client) =>
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        questions.push(request.params.message);
        return { action: "accept", content: { decision } };
      }),
    );
    expect((await asking.listPrompts()).prompts).toHaveLength(2);
    const got = await asking.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(got.messages).toHaveLength(1);
    expect(questions).toEqual(["Allow prompts/get 'greet' on server 'up'?"]);
    decision = "deny";
    await expect(asking.getPrompt({ name: "greet", arguments: { who: "Bo" } })).rejects.toThrow(
      /not approved/,
    );
    const mute = await surfaceClient(t.gateway);
    await expect(mute.getPrompt({ name: "greet", arguments: { who: "Cy" } })).rejects.toThrow(
      /cannot be asked/,
    );
    const gets = await t.rows("prompts/get");
    expect(gets.map((row) => [row.status, row.error?.code])).toEqual([
      ["ok", undefined],
      ["error", "PERMISSION_DENIED"],
      ["error", "PERMISSION_DENIED"],
    ]);
    // Under approval the answer is kept and lists are rows.
    expect(gets[0]?.normalizedRef).toMatch(/^sha256:/);
    expect((await t.rows("prompts/list")).length).toBeGreaterThan(0);
  });

  test("audited: the read's answer is in the content store under the row's ref", async () => {
    const t = await setup([upManifest({ resources: "audited" })]);
    const client = await surfaceClient(t.gateway);
    await client.readResource({ uri: "test://note" });
    const [row] = await t.rows("resources/read");
    const object = await t.governance.store.get(row?.normalizedRef as string);
    expect(JSON.parse(Buffer.from(object as Uint8Array).toString("utf8"))).toMatchObject({
      contents: [{ uri: "test://note", text: "a note" }],
    });
  });
});

describe("what the upstream asks or tells during a tool call", () => {
  test("elicitation and sampling are relayed to a client that declared them", async () => {
    const t = await setup();
    const client = await surfaceClient(t.gateway, { elicitation: {}, sampling: {} }, (c) => {
      c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
      c.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: "assistant",
        model: "test",
        content: { type: "text", text: "4" },
      }));
    });
    const asked = await client.callTool({ name: "ask", arguments: {} });
    expect(asked.content).toEqual([
      expect.objectContaining({ text: expect.stringContaining('accept:{"name":"Ada"}') }),
    ]);
    const sampled = await client.callTool({ name: "sample", arguments: {} });
    expect(sampled.content).toEqual([
      expect.objectContaining({ text: expect.stringContaining("model said 4") }),
    ]);
    // The broker records each relayed answer next to the call's own row.
    expect((await t.rows()).filter((row) => row.toolId === "ask" || row.toolId === "sample")).toHaveLength(2);
  });

  test("a client without elicitation gets a clear refusal, and the upstream call is stopped", async () => {
    const t = await setup();
    const client = await surfaceClient(t.gateway);
    const result = await client.callTool({ name: "ask", arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/declared no form elicitation/);
  });

  test("progress and log messages reach the client, logs filtered by its level", async () => {
    const t = await setup();
    const logs: unknown[] = [];
    const client = await surfaceClient(t.gateway, {}, (c) =>
      c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params.data);
      }),
    );
    await client.setLoggingLevel("info");
    const progress: number[] = [];
    const result = await client.callTool({ name: "work", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([expect.objectContaining({ text: expect.stringContaining("worked") })]);
    expect(progress).toEqual([1, 2, 3]);
    expect(logs).toEqual(["step 1", "step 3"]);
  });
});

describe("a source switched off for a session", () => {
  test("its prompts and resources are neither listed nor read for that session; another session keeps them", async () => {
    const t = await setup([upManifest({})]);
    await t.governance.sessions.disableSource("off", "up");
    const connect = async (sessionId: string) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await t.gateway.connect(serverSide, { sessionId });
      const client = new Client({ name: `client-${sessionId}`, version: "1.0.0" });
      await client.connect(clientSide);
      return client;
    };
    const off = await connect("off");
    expect((await off.listPrompts()).prompts).toEqual([]);
    expect((await off.listResources()).resources.map((r) => r.uri)).not.toContain("test://note");
    await expect(off.getPrompt({ name: "greet", arguments: { who: "x" } })).rejects.toThrow(/-32602/);
    await expect(off.readResource({ uri: "test://note" })).rejects.toThrow();
    const refused = (await t.rows()).filter((row) => row.sessionId === "off");
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((row) => row.error?.code === "SOURCE_DISABLED")).toBe(true);

    const on = await connect("on");
    expect((await on.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["greet", "pick"]);
    const got = await on.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(got.messages).toHaveLength(1);
    expect((await t.rows("prompts/get")).filter((row) => row.sessionId === "on")).toMatchObject([
      { status: "ok" },
    ]);
  });
});
