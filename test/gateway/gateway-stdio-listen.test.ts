/**
 * `subscriptions/listen` of a 2026-07-28 client over stdio: the SDK v2 client pinned to 2026-07-28 on
 * an in-process stdio pipe (newline-delimited JSON-RPC over streams, the framing a spawned process
 * uses) in front of `GatewayServer.connectStdio`, the upstream server reached through the real pool.
 * The listen is governed as over HTTP: the resource subscription is recorded and made upstream once,
 * the server's update reaches the client, a source whose `surface` policy forbids resources gets no
 * subscription, and closing the listen (or the connection) releases the upstream subscription.
 */
import { PassThrough } from "node:stream";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { afterEach, describe, expect, test } from "vitest";
import {
  createGatewayServer,
  type GatewayServer,
  type GatewayStdioConnection,
} from "../../src/gateway/index.js";
import type { SourceManifestInput } from "../../src/governance/manifests/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { until } from "../governance/rate-limit/rate-limit-conformance.js";
import { surfaceRuntime, upManifest } from "./gateway-surface-harness.js";

const closers: Array<() => Promise<unknown>> = [];
let governance: Governance | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
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

/**
 * The v2 client pinned to 2026-07-28 on a stdio pipe to the gateway: two streams, the gateway's
 * stdin and stdout, each end framed by the SDK's own stdio transport.
 */
async function stdioClient(
  gatewayServer: GatewayServer,
  principal?: string,
): Promise<{ client: ClientV2; connection: GatewayStdioConnection }> {
  const toGateway = new PassThrough();
  const fromGateway = new PassThrough();
  const connection = gatewayServer.connectStdio(
    { stdin: toGateway, stdout: fromGateway },
    principal === undefined ? {} : { principal },
  );
  const client = new ClientV2(
    { name: "stdio-listen", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  // The server transport reads newline-delimited messages from one stream and writes to another:
  // from the client's side that is exactly a process's stdout and stdin.
  await client.connect(new StdioServerTransport(fromGateway, toGateway));
  closers.push(async () => {
    await client.close();
    await connection.close();
  });
  expect(client.getProtocolEra()).toBe("modern");
  return { client, connection };
}

describe("subscriptions/listen for a 2026-07-28 client over stdio", () => {
  test("the subscription is governed and made upstream once, the update arrives, closing the listen releases it", async () => {
    const t = await setup();
    const { client, connection } = await stdioClient(t.gateway, "ada");
    expect(connection.revision()).toBe("2026-07-28");
    const updates: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => {
      updates.push(notification.params.uri);
    });
    const lists: string[] = [];
    client.setNotificationHandler("notifications/prompts/list_changed", () => {
      lists.push("prompts");
    });
    const listening = await client.listen({
      resourceSubscriptions: ["test://note"],
      promptsListChanged: true,
    });
    expect(listening.honoredFilter).toEqual({
      resourceSubscriptions: ["test://note"],
      promptsListChanged: true,
    });
    expect(t.upstream.subscribes).toEqual(["test://note"]);
    const [row] = await t.rows("resources/subscribe");
    expect(row).toMatchObject({ status: "ok", principal: "ada" });
    // The SDK client's listen names no conversation (it sends only the envelope): the user's `default`.
    expect(row?.sessionId).toMatch(/^gateway:conversation:[0-9a-f]{16}:default$/);

    await t.upstream.server().server.sendResourceUpdated({ uri: "test://note" });
    await until(() => updates.length >= 1);
    expect(updates).toEqual(["test://note"]);
    t.upstream.server().sendPromptListChanged();
    await until(() => lists.length >= 1);

    await listening.close();
    await until(() => t.upstream.unsubscribes.length > 0);
    expect(t.upstream.unsubscribes).toEqual(["test://note"]);
    // Released: a later update reaches no stream.
    await t.upstream.server().server.sendResourceUpdated({ uri: "test://note" });
    await client.listTools();
    expect(updates).toEqual(["test://note"]);
  });

  test("two listens on one pipe share one upstream subscription; ending the connection releases it", async () => {
    const t = await setup();
    const { client, connection } = await stdioClient(t.gateway);
    const first = await client.listen({ resourceSubscriptions: ["test://note"] });
    const second = await client.listen({ resourceSubscriptions: ["test://note"] });
    expect(second.honoredFilter).toEqual({ resourceSubscriptions: ["test://note"] });
    expect(t.upstream.subscribes).toEqual(["test://note"]);
    await first.close();
    await client.listTools();
    expect(t.upstream.unsubscribes).toEqual([]);
    await connection.close();
    await until(() => t.upstream.unsubscribes.length > 0);
    expect(t.upstream.unsubscribes).toEqual(["test://note"]);
  });

  test("bounded per connection: the 65th open listen is refused and releases what it subscribed; one listen governs at most 256 uris", async () => {
    const t = await setup();
    const { client } = await stdioClient(t.gateway);
    const open = [];
    for (let i = 0; i < 64; i++) open.push(await client.listen({ resourceSubscriptions: ["test://note"] }));
    await expect(client.listen({ resourceSubscriptions: ["test://note"] })).rejects.toMatchObject({
      code: -32603,
    });
    expect(t.upstream.subscribes).toEqual(["test://note"]);
    for (const listening of open) await listening.close();
    await until(() => t.upstream.unsubscribes.length > 0);
    expect(t.upstream.unsubscribes).toEqual(["test://note"]);

    const many = Array.from({ length: 300 }, (_, i) => `test://item/${i}`);
    const rowsBefore = (await t.rows("resources/subscribe")).length;
    const wide = await client.listen({ resourceSubscriptions: many });
    expect(wide.honoredFilter.resourceSubscriptions).toHaveLength(256);
    expect((await t.rows("resources/subscribe")).length - rowsBefore).toBe(256);
    await wide.close();
  });

  test.each([
    ["denied", []],
    // No question can be asked on a listen: a subscription under approval is refused.
    ["approval", ["PERMISSION_DENIED"]],
  ] as const)(
    "a source whose surface policy for resources is %s: no subscription upstream, no update",
    async (policy, refusals) => {
      const t = await setup([upManifest({ resources: policy })]);
      const { client } = await stdioClient(t.gateway);
      const updates: string[] = [];
      client.setNotificationHandler("notifications/resources/updated", (notification) => {
        updates.push(notification.params.uri);
      });
      const listening = await client.listen({
        resourceSubscriptions: ["test://note"],
        resourcesListChanged: true,
      });
      expect(listening.honoredFilter).toEqual({ resourcesListChanged: true });
      expect(t.upstream.subscribes).toEqual([]);
      expect((await t.rows("resources/subscribe")).map((row) => row.error?.code)).toEqual(refusals);
      await t.upstream.server().server.sendResourceUpdated({ uri: "test://note" });
      await client.listTools();
      expect(updates).toEqual([]);
      await listening.close();
    },
  );
});
