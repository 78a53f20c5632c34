/**
 * The upstream server's surface for 2026-07-28 clients, over HTTP on loopback with the SDK v2 client
 * pinned to 2026-07-28: prompts, resources, templates and completion served by the same session method
 * table the 2025-11-25 face uses, under the manifest's `surface` policy with one ledger row per read; a
 * read under `approval` asked by an `input_required` round trip (its state used once); and
 * `subscriptions/listen` streams joining the governed subscriptions (updates and list changes arrive,
 * a refused uri is left out of the acknowledgement, the upstream subscription ends with the stream).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, test } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import type { SourceManifestInput } from "../../src/governance/manifests/index.js";
import type { Governance } from "../../src/runtime/create-governance.js";
import { until } from "../governance/rate-limit/rate-limit-conformance.js";
import { surfaceClient, surfaceRuntime, upManifest } from "./gateway-surface-harness.js";

const closers: Array<() => Promise<unknown>> = [];
let governance: Governance | undefined;
let gateway: GatewayServer | undefined;
let http: GatewayHttpServer | undefined;
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await http?.close();
  await gateway?.close();
  await governance?.close();
  http = undefined;
  gateway = undefined;
  governance = undefined;
});

async function setup(manifests: SourceManifestInput[] = []) {
  const runtime = await surfaceRuntime(manifests);
  governance = runtime.governance;
  gateway = createGatewayServer({ governance: runtime.governance, eager: true, toolNames: "upstream" });
  http = await serveGatewayHttp(gateway);
  return { ...runtime, gateway, http };
}

/** The SDK v2 client pinned to 2026-07-28; `decide` answers the gateway's forms (absent: no elicitation). */
async function modernClient(
  url: string,
  options: { decide?: (message: string) => string; manual?: boolean; conversation?: string } = {},
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "modern-surface", version: "1.0.0" },
    {
      capabilities: options.decide ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const decide = options.decide;
  if (decide) {
    client.setRequestHandler("elicitation/create", async (request) => ({
      action: "accept",
      content: { decision: decide((request.params as { message: string }).message) },
    }));
  }
  const headers: Record<string, string> = options.conversation
    ? { "Sciencegate-Conversation": options.conversation }
    : {};
  await client.connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  closers.push(() => client.close());
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: { code?: number; message?: string }) => `${error.code}: ${error.message}`,
  );

describe("the upstream surface for a 2026-07-28 client", () => {
  test("prompts, resources, templates and completion: what a 2025-11-25 session gets, a row per read", async () => {
    const t = await setup();
    const modern = await modernClient(t.http.url);
    const legacy = await surfaceClient(t.gateway);
    expect((await modern.listPrompts()).prompts.map((p) => p.name)).toEqual(
      (await legacy.listPrompts()).prompts.map((p) => p.name),
    );
    const got = await modern.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(got.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }]);
    expect((await modern.listResources()).resources.map((r) => r.uri)).toContain("test://note");
    expect((await modern.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)).toEqual([
      "test://item/{id}",
    ]);
    const read = await modern.readResource({ uri: "test://item/102" });
    expect(read.contents).toEqual([
      { uri: "test://item/102", mimeType: "application/json", text: JSON.stringify({ id: "102" }) },
    ]);
    const completed = await modern.complete({
      ref: { type: "ref/prompt", name: "pick" },
      argument: { name: "colour", value: "r" },
    });
    expect(completed.completion.values).toEqual(["red", "rose"]);
    // One row per get and read, keyed by the conversation's session and nobody else's.
    const gets = await t.rows("prompts/get");
    const reads = await t.rows("resources/read");
    expect(gets).toHaveLength(1);
    expect(reads).toHaveLength(1);
    expect(gets[0]?.sessionId).toMatch(/^gateway:conversation:/);
    expect((await t.rows("completion/complete")).length).toBe(1);
  });

  test("denied: neither listed nor read (as for a 2025-11-25 session, the name is unknown)", async () => {
    const t = await setup([upManifest({ prompts: "denied", resources: "denied" })]);
    const modern = await modernClient(t.http.url);
    expect((await modern.listPrompts()).prompts).toEqual([]);
    expect((await modern.listResources()).resources.map((r) => r.uri)).not.toContain("test://note");
    expect(await refusalOf(modern.getPrompt({ name: "greet", arguments: { who: "x" } }))).toMatch(
      /-32602.*Unknown prompt/,
    );
    // The revision's "resource not found" is -32602 (the SDK maps the 2025 -32002).
    expect(await refusalOf(modern.readResource({ uri: "test://note" }))).toMatch(
      /-32602.*Resource not found/,
    );
    expect(await t.rows("prompts/get")).toEqual([]);
  });
});

describe("a read under `approval` for a 2026-07-28 client", () => {
  test("asks by an input_required round trip: allow reads once, deny and no elicitation refuse, each one row", async () => {
    const t = await setup([upManifest({ prompts: "approval", resources: "approval" })]);
    const questions: string[] = [];
    let decision = "allow";
    const asking = await modernClient(t.http.url, {
      decide: (message) => {
        questions.push(message);
        return decision;
      },
    });
    const got = await asking.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    expect(got.messages).toHaveLength(1);
    const read = await asking.readResource({ uri: "test://note" });
    expect(read.contents).toEqual([{ uri: "test://note", mimeType: "text/plain", text: "a note" }]);
    expect(questions).toEqual([
      "Allow prompts/get 'greet' on server 'up'?",
      "Allow resources/read 'test://note' on server 'up'?",
    ]);
    decision = "deny";
    expect(await refusalOf(asking.getPrompt({ name: "greet", arguments: { who: "Bo" } }))).toMatch(
      /-32602.*not approved: the user declined/,
    );
    const mute = await modernClient(t.http.url);
    expect(await refusalOf(mute.getPrompt({ name: "greet", arguments: { who: "Cy" } }))).toMatch(
      /cannot be asked/,
    );
    // The first round of each asked read wrote nothing; each answer is exactly one row.
    expect((await t.rows("prompts/get")).map((row) => [row.status, row.error?.code])).toEqual([
      ["ok", undefined],
      ["error", "PERMISSION_DENIED"],
      ["error", "PERMISSION_DENIED"],
    ]);
    expect((await t.rows("resources/read")).map((row) => row.status)).toEqual(["ok"]);
  });

  test("the answered state is used once; another read's or another conversation's state is refused", async () => {
    const t = await setup([upManifest({ prompts: "approval" })]);
    const manual = await modernClient(t.http.url, { decide: () => "allow", manual: true });
    const first = (await manual.getPrompt({ name: "greet", arguments: { who: "Ada" } }, {
      allowInputRequired: true,
    } as never)) as unknown as {
      resultType: string;
      requestState: string;
      inputRequests: Record<string, unknown>;
    };
    expect(first.resultType).toBe("input_required");
    expect(Object.keys(first.inputRequests)).toEqual(["approval"]);
    expect(await t.rows("prompts/get")).toHaveLength(0);
    const retry = (state: string, who = "Ada", by: ClientV2 = manual) =>
      by.getPrompt(
        {
          name: "greet",
          arguments: { who },
          inputResponses: { approval: { action: "accept", content: { decision: "allow" } } },
          requestState: state,
        } as never,
        { allowInputRequired: true } as never,
      );
    expect(await refusalOf(retry(first.requestState, "Eve"))).toMatch(/-32602.*other_call/);
    const other = await modernClient(t.http.url, { decide: () => "allow", manual: true, conversation: "x" });
    expect(await refusalOf(retry(first.requestState, "Ada", other))).toMatch(/-32602.*other_call/);
    const answered = (await retry(first.requestState)) as { messages: unknown[] };
    expect(answered.messages).toHaveLength(1);
    expect(await refusalOf(retry(first.requestState))).toMatch(/-32602.*replayed/);
    expect((await t.rows("prompts/get")).map((row) => row.status)).toEqual(["ok"]);
  });
});

describe("subscriptions/listen for a 2026-07-28 client", () => {
  test("a resource subscription: governed and recorded, one upstream subscription, updates arrive, ended with the stream", async () => {
    const t = await setup();
    const updates: string[] = [];
    const modern = await modernClient(t.http.url);
    modern.setNotificationHandler("notifications/resources/updated", (notification) => {
      updates.push(notification.params.uri);
    });
    const promptLists: number[] = [];
    modern.setNotificationHandler("notifications/prompts/list_changed", () => {
      promptLists.push(1);
    });
    const first = await modern.listen({ resourceSubscriptions: ["test://note"], promptsListChanged: true });
    expect(first.honoredFilter).toEqual({ resourceSubscriptions: ["test://note"], promptsListChanged: true });
    const second = await modern.listen({ resourceSubscriptions: ["test://note"] });
    expect(t.upstream.subscribes).toEqual(["test://note"]);
    expect((await t.rows("resources/subscribe")).map((row) => row.status)).toEqual(["ok", "ok"]);

    await t.upstream.server().server.sendResourceUpdated({ uri: "test://note" });
    await until(() => updates.length >= 2);
    expect(updates).toEqual(["test://note", "test://note"]);
    t.upstream.server().sendPromptListChanged();
    await until(() => promptLists.length >= 1);

    await first.close();
    await second.close();
    await until(() => t.upstream.unsubscribes.length > 0);
    expect(t.upstream.unsubscribes).toEqual(["test://note"]);
  });

  test("a uri the policy refuses (or no server offers) is left out of the acknowledgement, the refusal recorded", async () => {
    const t = await setup([upManifest({ resources: "approval" })]);
    const modern = await modernClient(t.http.url, { decide: () => "allow" });
    const listening = await modern.listen({
      resourceSubscriptions: ["test://note"],
      resourcesListChanged: true,
    });
    // No question can be asked on a stream: the subscription under approval is refused.
    expect(listening.honoredFilter).toEqual({ resourcesListChanged: true });
    expect(t.upstream.subscribes).toEqual([]);
    expect((await t.rows("resources/subscribe")).map((row) => row.error?.code)).toEqual([
      "PERMISSION_DENIED",
    ]);
    await listening.close();
  });
});

describe("listen streams per user over HTTP", () => {
  test("a user over the limit is refused; another user and the same user after a close are not", async () => {
    const runtime = await surfaceRuntime();
    governance = runtime.governance;
    gateway = createGatewayServer({ governance, eager: true, toolNames: "upstream", maxListensPerUser: 2 });
    http = await serveGatewayHttp(gateway, {
      authenticate: (request) => {
        const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
        return user === undefined ? undefined : { id: user, user };
      },
    });
    const url = http.url;
    const as = async (user: string) => {
      const client = new ClientV2(
        { name: `listener-${user}`, version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new HttpV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${user}` } } }),
      );
      closers.push(() => client.close());
      return client;
    };
    const alice = await as("alice");
    const bob = await as("bob");
    const first = await alice.listen({ resourceSubscriptions: ["test://note"] });
    const second = await alice.listen({ toolsListChanged: true });
    expect(await refusalOf(alice.listen({ toolsListChanged: true }))).toMatch(
      /-32603.*a user may hold 2 listen streams/,
    );
    // Alice's streams are hers: bob opens his own.
    const bobs = await bob.listen({ toolsListChanged: true });
    expect(bobs.honoredFilter).toEqual({ toolsListChanged: true });
    // One of alice's closed: she may open one again.
    await first.close();
    await until(
      async () =>
        (await refusalOf(alice.listen({ toolsListChanged: true }).then((l) => l.close()))) === "ran",
    );
    await second.close();
    await bobs.close();
  });
});
