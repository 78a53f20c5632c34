/**
 * What an upstream server asks during a tool call, relayed to the gateway's clients of both revisions,
 * over HTTP on loopback: a 2025-11-25 server's mid-call elicitation or sampling reaches a 2026-07-28
 * client (SDK v2, pinned) as `input_required`, the call held open on the replica that asked until the
 * retry answers it; a 2026-07-28 server's own `input_required` reaches a 2026-07-28 client the same way
 * and a 2025-11-25 client (SDK 1.x) as elicitation. Each call runs upstream once and is one ledger row:
 * a replayed state, a retry on another replica and an unanswered question run nothing again.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpV2,
  LOG_LEVEL_META_KEY,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import {
  createGatewayServer,
  type GatewayHttpOptions,
  type GatewayHttpServer,
  type GatewayServer,
  type GatewayServerOptions,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import type { InvocationRecord } from "../../src/governance/audit/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { until } from "../governance/rate-limit/rate-limit-conformance.js";
import { effectsFile, stdioUpstream } from "../mcp/upstream-fixture.js";
import { surfaceRuntime } from "./gateway-surface-harness.js";

const SECRET = "a-request-state-secret-of-32-bytes!!";
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A gateway over HTTP on a runtime; closed after the test (before the runtime). */
async function serve(
  governance: Governance,
  options: Omit<GatewayServerOptions, "governance"> = {},
  authenticate?: GatewayHttpOptions["authenticate"],
) {
  const gateway: GatewayServer = createGatewayServer({
    governance,
    eager: true,
    toolNames: "upstream",
    requestStateSecret: SECRET,
    ...options,
  });
  const http: GatewayHttpServer = await serveGatewayHttp(gateway, authenticate ? { authenticate } : {});
  closers.push(async () => {
    await http.close();
    await gateway.close();
  });
  return http;
}

type Answer = (params: { message: string; requestedSchema?: { properties?: object } }) => unknown;

/** The SDK v2 client pinned to 2026-07-28, answering forms with `answer` and sampling with "4". */
async function modernClient(
  url: string,
  answer: Answer | undefined,
  manual = false,
  user?: string,
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "modern-upstream", version: "1.0.0" },
    {
      capabilities: answer ? { elicitation: { form: {} }, sampling: {} } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      ...(manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  if (answer) {
    client.setRequestHandler(
      "elicitation/create",
      async (request) => answer(request.params as never) as never,
    );
    client.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      model: "test",
      content: { type: "text", text: "4" },
    }));
  }
  const headers: Record<string, string> = user ? { Authorization: `Bearer ${user}` } : {};
  await client.connect(new HttpV2(new URL(url), { requestInit: { headers } }));
  closers.push(() => client.close());
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

/**
 * Approves the gateway's own approval forms once; anything else the upstream asks gets `upstream`.
 * Each question's message (`approval` for the gateway's form) is pushed to `asked`.
 */
const answering =
  (upstream: Record<string, unknown>, asked: string[] = []): Answer =>
  (params) => {
    const approval = params.requestedSchema?.properties && "decision" in params.requestedSchema.properties;
    asked.push(approval ? "approval" : params.message);
    return approval
      ? { action: "accept", content: { decision: "allow_once" } }
      : { action: "accept", content: upstream };
  };

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: { code?: number; message?: string }) => `${error.code}: ${error.message}`,
  );

interface Round {
  resultType: string;
  requestState: string;
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
}

describe("a 2025-11-25 server's question during a 2026-07-28 client's call", () => {
  async function setup() {
    const runtime = await surfaceRuntime();
    closers.push(() => runtime.governance.close());
    const rows = async (toolId: string): Promise<InvocationRecord[]> =>
      (await runtime.ledger.query({})).filter((row) => row.toolId === toolId);
    return { ...runtime, rows };
  }

  test("elicitation and sampling reach the client as input_required; the retry's answer goes upstream", async () => {
    const t = await setup();
    const http = await serve(t.governance);
    const asked: string[] = [];
    const client = await modernClient(http.url, answering({ name: "Ada" }, asked));
    expect(textOf(await client.callTool({ name: "ask", arguments: {} }))).toBe('accept:{"name":"Ada"}');
    expect(asked).toEqual(["Your name?"]);
    expect(textOf(await client.callTool({ name: "sample", arguments: {} }))).toBe("model said 4");
    expect((await t.rows("ask")).map((row) => row.status)).toEqual(["ok"]);
    expect((await t.rows("sample")).map((row) => row.status)).toEqual(["ok"]);
  });

  test("by hand: the question is the server's own; the answered state is used once", async () => {
    const t = await setup();
    const http = await serve(t.governance);
    const client = await modernClient(http.url, answering({}), true);
    const first = (await client.callTool(
      { name: "ask", arguments: {} },
      { allowInputRequired: true },
    )) as unknown as Round;
    expect(first.resultType).toBe("input_required");
    const [key, question] = Object.entries(first.inputRequests)[0] ?? [];
    expect(question).toMatchObject({ method: "elicitation/create", params: { message: "Your name?" } });
    // The call is in flight upstream, held for the answer: no row yet.
    expect(await t.rows("ask")).toEqual([]);
    const retry = () =>
      client.callTool(
        {
          name: "ask",
          arguments: {},
          inputResponses: { [key as string]: { action: "accept", content: { name: "Bo" } } },
          requestState: first.requestState,
        } as never,
        { allowInputRequired: true },
      );
    expect(textOf(await retry())).toBe('accept:{"name":"Bo"}');
    expect(await refusalOf(retry())).toMatch(/-32602.*not held by this gateway replica/);
    expect((await t.rows("ask")).map((row) => row.status)).toEqual(["ok"]);
  });

  test("a retry on another replica is refused and runs nothing; the held call ends at its timeout, one row", async () => {
    const t = await setup();
    const a = await serve(t.governance, { upstreamInputTimeoutMs: 400 });
    const b = await serve(t.governance);
    const onA = await modernClient(a.url, answering({}), true);
    const onB = await modernClient(b.url, answering({}), true);
    const first = (await onA.callTool(
      { name: "ask", arguments: {} },
      { allowInputRequired: true },
    )) as unknown as Round;
    const key = Object.keys(first.inputRequests)[0] as string;
    const elsewhere = onB.callTool(
      {
        name: "ask",
        arguments: {},
        inputResponses: { [key]: { action: "accept", content: { name: "Cy" } } },
        requestState: first.requestState,
      } as never,
      { allowInputRequired: true },
    );
    expect(await refusalOf(elsewhere)).toMatch(/-32602.*must reach the replica that asked it/);
    await until(async () => (await t.rows("ask")).length > 0, 5_000);
    const rows = await t.rows("ask");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status).toBe("error");
  });

  test("a held call's state is bound to its user and signed: another user's or a forged retry answers nothing", async () => {
    const t = await setup();
    const http = await serve(t.governance, {}, (request) => {
      const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
      return user === undefined ? undefined : { id: user, user };
    });
    const alice = await modernClient(http.url, answering({}), true, "alice");
    const bob = await modernClient(http.url, answering({}), true, "bob");
    const first = (await alice.callTool(
      { name: "ask", arguments: {} },
      { allowInputRequired: true },
    )) as unknown as Round;
    const key = Object.keys(first.inputRequests)[0] as string;
    const retry = (by: ClientV2, state: string, name: string) =>
      by.callTool(
        {
          name: "ask",
          arguments: {},
          inputResponses: { [key]: { action: "accept", content: { name } } },
          requestState: state,
        } as never,
        { allowInputRequired: true },
      );
    expect(await refusalOf(retry(bob, first.requestState, "Mallory"))).toMatch(/-32602.*other_principal/);
    const [head, payload, signature] = first.requestState.split(".");
    const flipped = `${signature?.[0] === "A" ? "B" : "A"}${signature?.slice(1)}`;
    expect(await refusalOf(retry(alice, `${head}.${payload}.${flipped}`, "Forged"))).toMatch(
      /-32602.*bad_signature/,
    );
    // The held call is still alice's to answer, and runs once.
    expect(textOf(await retry(alice, first.requestState, "Alice"))).toBe('accept:{"name":"Alice"}');
    const rows = await t.rows("ask");
    expect(rows.map((row) => [row.status, row.principal])).toEqual([["ok", "alice"]]);
  });

  test("log messages at the request's own level and progress under its own token reach the client", async () => {
    const t = await setup();
    const http = await serve(t.governance);
    const client = await modernClient(http.url, answering({}));
    const logs: unknown[] = [];
    client.setNotificationHandler("notifications/message", (notification) => {
      logs.push(notification.params.data);
    });
    const progress: number[] = [];
    await client.callTool({ name: "work", arguments: {} }, { onprogress: (p) => progress.push(p.progress) });
    // No level in the request: the revision's rule is no log messages.
    expect(logs).toEqual([]);
    expect(progress).toEqual([1, 2, 3]);
    await client.callTool({ name: "work", arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: "info" } });
    expect(logs).toEqual(["step 1", "step 3"]);
  });

  test("a client that declared no elicitation gets a clear refusal, and the upstream call is stopped", async () => {
    const t = await setup();
    const http = await serve(t.governance);
    const client = await modernClient(http.url, undefined);
    const result = await client.callTool({ name: "ask", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/declared no form elicitation/);
    expect((await t.rows("ask")).map((row) => row.status)).toEqual(["error"]);
  });
});

describe("the fixture server over stdio: its effect happens once", () => {
  async function fixture(modernOnly: boolean) {
    const effects = effectsFile();
    const governance = await createGovernance({
      config: { servers: [stdioUpstream("up", { effects: effects.path, modernOnly })] },
      manifests: { builtin: false, dirs: [] },
      storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-face26-")) },
    });
    closers.push(() => governance.close());
    const done = (action: string) =>
      effects.lines().filter((line) => line === `effect confirm_action ${action}`).length;
    const rows = async () =>
      (await governance.ledger.query({})).filter((row) => row.toolId === "confirm_action");
    return { governance, done, rows };
  }

  test("a 2025-11-25 server's elicitation (mid-call): the approval, then its question, each a round trip", async () => {
    const t = await fixture(false);
    const http = await serve(t.governance);
    const asked: string[] = [];
    const client = await modernClient(http.url, answering({ confirm: true }, asked));
    const result = await client.callTool({ name: "confirm_action", arguments: { action: "launch" } });
    expect(textOf(result)).toBe("done: launch");
    expect(asked).toEqual(["approval", "Really launch?"]);
    expect(t.done("launch")).toBe(1);
    expect((await t.rows()).map((row) => row.status)).toEqual(["ok"]);
  }, 30_000);

  test("a 2025-11-25 server's two questions in one call: one round each, the call held across both", async () => {
    const effects = effectsFile();
    const governance = await createGovernance({
      config: { servers: [stdioUpstream("up", { effects: effects.path })] },
      manifests: { builtin: false, dirs: [] },
      storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-face26-")) },
    });
    closers.push(() => governance.close());
    const http = await serve(governance);
    const asked: string[] = [];
    const client = await modernClient(http.url, (params) => {
      const props = params.requestedSchema?.properties ?? {};
      asked.push("decision" in props ? "approval" : params.message);
      if ("decision" in props) return { action: "accept", content: { decision: "allow_once" } };
      return { action: "accept", content: "colour" in props ? { colour: "blue" } : { name: "Ada" } };
    });
    expect(textOf(await client.callTool({ name: "two_questions", arguments: {} }))).toBe("Ada likes blue");
    expect(asked).toEqual(["approval", "Your name?", "Ada, your favourite colour?"]);
    expect(effects.lines().filter((line) => line.startsWith("effect two_questions"))).toEqual([
      "effect two_questions Ada blue",
    ]);
    const rows = (await governance.ledger.query({})).filter((row) => row.toolId === "two_questions");
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
  }, 30_000);

  test("a 2026-07-28 server's input_required: to a 2026-07-28 client as input_required, to a 2025-11-25 client as elicitation", async () => {
    const t = await fixture(true);
    const http = await serve(t.governance);
    const modernAsked: string[] = [];
    const modern = await modernClient(http.url, answering({ confirm: true }, modernAsked));
    expect(textOf(await modern.callTool({ name: "confirm_action", arguments: { action: "one" } }))).toBe(
      "done: one",
    );
    expect(modernAsked).toEqual(["approval", "Really one?"]);
    const asked: string[] = [];
    const legacy = new Client({ name: "legacy", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    legacy.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return answering({ confirm: true })(request.params as never) as never;
    });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    closers.push(() => legacy.close());
    expect(textOf(await legacy.callTool({ name: "confirm_action", arguments: { action: "two" } }))).toBe(
      "done: two",
    );
    expect(asked).toEqual([expect.stringContaining("confirm_action"), "Really two?"]);
    expect([t.done("one"), t.done("two")]).toEqual([1, 1]);
    expect((await t.rows()).map((row) => row.status)).toEqual(["ok", "ok"]);
  }, 30_000);
});

describe("a 2026-07-28 server's round pauses the call: recorded, and continued by any gateway", () => {
  async function fixture() {
    const effects = effectsFile();
    const governance = await createGovernance({
      config: { servers: [stdioUpstream("up", { effects: effects.path, modernOnly: true })] },
      manifests: { builtin: false, dirs: [] },
      storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-paused-")) },
    });
    closers.push(() => governance.close());
    const rows = async (toolId: string) =>
      (await governance.ledger.query({})).filter((row) => row.toolId === toolId);
    const lines = (tool: string) => effects.lines().filter((line) => line.startsWith(`effect ${tool}`));
    return { governance, rows, lines };
  }

  const round = (client: ClientV2, name: string, extra: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: {}, ...extra } as never, {
      allowInputRequired: true,
    }) as unknown as Promise<Round & { content?: Array<{ text?: string }> }>;
  const allowOnce = (state: Round) => ({
    inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
    requestState: state.requestState,
  });

  test("two questions, each answered through the other gateway: one upstream effect, one row", async () => {
    const t = await fixture();
    // Two gateways on one runtime and one secret, nothing shared but the ledger: two replicas.
    const a = await modernClient((await serve(t.governance)).url, answering({}), true);
    const b = await modernClient((await serve(t.governance)).url, answering({}), true);
    const approval = await round(a, "two_questions");
    const first = await round(a, "two_questions", allowOnce(approval));
    expect(first.inputRequests).toEqual({
      upstream_1: {
        method: "elicitation/create",
        params: expect.objectContaining({ message: "Your name?" }),
      },
    });
    const second = await round(b, "two_questions", {
      inputResponses: { upstream_1: { action: "accept", content: { name: "Ada" } } },
      requestState: first.requestState,
    });
    expect(Object.keys(second.inputRequests)).toEqual(["upstream_2"]);
    expect(second.inputRequests.upstream_2?.params.message).toBe("Ada, your favourite colour?");
    // The first state again: its question was answered, and the call went on without it.
    expect(
      await refusalOf(
        round(a, "two_questions", {
          inputResponses: { upstream_1: { action: "accept", content: { name: "Eve" } } },
          requestState: first.requestState,
        }),
      ),
    ).toMatch(/-32602.*answered already/);
    const done = await round(a, "two_questions", {
      inputResponses: { upstream_2: { action: "accept", content: { colour: "blue" } } },
      requestState: second.requestState,
    });
    expect(textOf(done)).toBe("Ada likes blue");
    expect(t.lines("two_questions")).toEqual(["effect two_questions Ada blue"]);
    expect((await t.rows("two_questions")).map((row) => row.status)).toEqual(["ok"]);
    const decisions = (await t.governance.ledger.listAuthorizations({}))
      .filter((row) => row.toolId === "two_questions")
      .map((row) => row.decisionSource);
    expect(decisions).toEqual([
      "user_once",
      "upstream_asked",
      "user_answered",
      "upstream_asked",
      "user_answered",
    ]);
    // Both answered states again, on either gateway: refused, nothing more runs.
    for (const [client, state, key] of [
      [b, first, "upstream_1"],
      [b, second, "upstream_2"],
    ] as const) {
      expect(
        await refusalOf(
          round(client, "two_questions", {
            inputResponses: { [key]: { action: "accept", content: { name: "Eve", colour: "red" } } },
            requestState: state.requestState,
          }),
        ),
      ).toMatch(/-32602.*replayed/);
    }
    expect(t.lines("two_questions")).toHaveLength(1);
  }, 60_000);

  test("an answer that does not fit the question's form asks it again; nothing runs until one does", async () => {
    const t = await fixture();
    const client = await modernClient((await serve(t.governance)).url, answering({}), true);
    const approval = await round(client, "two_questions");
    const first = await round(client, "two_questions", allowOnce(approval));
    const again = await round(client, "two_questions", {
      inputResponses: { upstream_1: { action: "accept", content: { name: 42 } } },
      requestState: first.requestState,
    });
    expect(again.resultType).toBe("input_required");
    expect(again.inputRequests.upstream_1?.params.message).toBe(
      "The answer was not used: content.name: must be string.\n\nYour name?",
    );
    const none = await round(client, "two_questions", { requestState: first.requestState });
    expect(Object.keys(none.inputRequests)).toEqual(["upstream_1"]);
    expect(t.lines("two_questions")).toEqual([]);
    expect(await t.rows("two_questions")).toEqual([]);
  }, 60_000);

  test("a paused call's state is its user's, signed and expiring: another user's, forged or expired retry runs nothing", async () => {
    const t = await fixture();
    let skew = 0;
    const clock = {
      now: () => Date.now() + skew,
      sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
    };
    const http = await serve(t.governance, { clock, requestStateTtlMs: 60_000 }, (request) => {
      const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
      return user === undefined ? undefined : { id: user, user };
    });
    const alice = await modernClient(http.url, answering({}), true, "alice");
    const bob = await modernClient(http.url, answering({}), true, "bob");
    const approval = await round(alice, "confirm_action", { arguments: { action: "go" } });
    const asked = await round(alice, "confirm_action", {
      arguments: { action: "go" },
      ...allowOnce(approval),
    });
    const answer = (state: string) => ({
      arguments: { action: "go" },
      inputResponses: { upstream_1: { action: "accept", content: { confirm: true } } },
      requestState: state,
    });
    expect(await refusalOf(round(bob, "confirm_action", answer(asked.requestState)))).toMatch(
      /-32602.*other_principal/,
    );
    const [head, payload, signature] = asked.requestState.split(".");
    const decoded = JSON.parse(Buffer.from(payload as string, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...decoded, principal: "bob" })).toString("base64url");
    expect(await refusalOf(round(bob, "confirm_action", answer(`${head}.${forged}.${signature}`)))).toMatch(
      /-32602.*bad_signature/,
    );
    skew = 61_000;
    expect(await refusalOf(round(alice, "confirm_action", answer(asked.requestState)))).toMatch(
      /-32602.*expired/,
    );
    expect(t.lines("confirm_action")).toEqual([]);
    skew = 0;
    expect(textOf(await round(alice, "confirm_action", answer(asked.requestState)))).toBe("done: go");
    const rows = await t.rows("confirm_action");
    expect(rows.map((row) => [row.status, row.principal])).toEqual([["ok", "alice"]]);
  }, 60_000);
});
