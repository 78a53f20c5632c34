/**
 * The gateway serves 2026-07-28 clients (stateless requests) and 2025-11-25 clients side by side on
 * one HTTP endpoint: the SDK v2 client pinned to 2026-07-28, in `auto` mode, and the 1.x client;
 * `tool_search`, tools, an approval (a multi-round-trip request for 2026-07-28, elicitation for
 * 2025-11-25), and each attack on the approval's `requestState` refused with nothing run.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { Clock } from "../../src/core/index.js";
import {
  createElicitationApproval,
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { createLab, type Lab } from "./gateway-harness.js";

const WRITE = "mcp__lab__write";
const allow = (decision: string) => ({ action: "accept", content: { decision } }) as const;

let lab: Lab;
let gateway: GatewayServer;
let http: GatewayHttpServer;
/** The system clock, moved forward by the test that needs an expired state. */
const clock = {
  skewMs: 0,
  now() {
    return Date.now() + this.skewMs;
  },
} as Clock & { skewMs: number };
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, clock });
  http = await serveGatewayHttp(gateway);
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
});

/** A v2 client; `answer` answers the gateway's approval form (auto mode of the SDK). */
async function v2Client(
  mode: "pin" | "auto",
  options: { conversation?: string; answer?: () => unknown; manual?: boolean } = {},
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "v2-test", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: mode === "pin" ? { pin: "2026-07-28" } : "auto" },
      ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  client.setRequestHandler(
    "elicitation/create",
    async () => (options.answer ?? (() => allow("allow_once")))() as never,
  );
  const headers: Record<string, string> = options.conversation
    ? { "Sciencegate-Conversation": options.conversation }
    : {};
  await client.connect(new HttpV2(new URL(http.url), { requestInit: { headers } }));
  closers.push(() => client.close());
  return client;
}

async function promoteWrite(client: ClientV2): Promise<void> {
  await client.callTool({ name: "tool_search", arguments: { query: `select:${WRITE}` } });
}

describe("a 2026-07-28 client", () => {
  test("pinned: server/discover, tools, tool_search, and an approval as a multi-round-trip request", async () => {
    const asked: unknown[] = [];
    const client = await v2Client("pin", {
      conversation: "pinned-1",
      answer: () => {
        asked.push(1);
        return allow("allow_once");
      },
    });
    expect(client.getProtocolEra()).toBe("modern");
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("tool_search");
    expect(names).not.toContain(WRITE);
    await promoteWrite(client);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(WRITE);
    const before = lab.calls.write ?? 0;
    const result = await client.callTool({ name: WRITE, arguments: { query: "pinned" } });
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(lab.calls.write).toBe(before + 1);
  });

  test("auto: the probe finds 2026-07-28, and the approval is the same round trip", async () => {
    const client = await v2Client("auto", { conversation: "auto-1" });
    expect(client.getProtocolEra()).toBe("modern");
    await promoteWrite(client);
    const before = lab.calls.write ?? 0;
    const result = await client.callTool({ name: WRITE, arguments: { query: "auto" } });
    expect(result.isError).toBeFalsy();
    expect(lab.calls.write).toBe(before + 1);
  });

  test("promotions belong to the conversation: another handle has not loaded the tool", async () => {
    const one = await v2Client("pin", { conversation: "conv-a" });
    await promoteWrite(one);
    expect((await one.listTools()).tools.map((tool) => tool.name)).toContain(WRITE);
    const other = await v2Client("pin", { conversation: "conv-b" });
    expect((await other.listTools()).tools.map((tool) => tool.name)).not.toContain(WRITE);
  });

  test("deny: nothing runs, and the refusal is the call's one ledger row", async () => {
    const client = await v2Client("pin", { conversation: "deny-1", answer: () => allow("deny") });
    await promoteWrite(client);
    const before = lab.calls.write ?? 0;
    const rows = await lab.governance.ledger.count({ toolId: "write" });
    const result = await client.callTool({ name: WRITE, arguments: { query: "denied" } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("PERMISSION_DENIED");
    expect(lab.calls.write ?? 0).toBe(before);
    expect(await lab.governance.ledger.count({ toolId: "write" })).toBe(rows + 1);
  });
});

describe("a 2025-11-25 client on the same endpoint", () => {
  test("the v2 client in legacy mode: a 2025-11-25 session, the approval by elicitation", async () => {
    const client = new ClientV2(
      { name: "v2-legacy", version: "1" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "legacy" } },
    );
    let asked = 0;
    client.setRequestHandler("elicitation/create", async () => {
      asked++;
      return allow("allow_once") as never;
    });
    await client.connect(new HttpV2(new URL(http.url)));
    closers.push(() => client.close());
    expect(client.getProtocolEra()).toBe("legacy");
    await promoteWrite(client);
    const before = lab.calls.write ?? 0;
    const result = await client.callTool({ name: WRITE, arguments: { query: "v2 legacy" } });
    expect(result.isError).toBeFalsy();
    expect(asked).toBe(1);
    expect(lab.calls.write).toBe(before + 1);
  });

  test("the 1.x client: a session, tool_search, and the approval by elicitation", async () => {
    const client = new Client({ name: "v1-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return allow("allow_once");
    });
    const transport = new StreamableHTTPClientTransport(new URL(http.url));
    await client.connect(transport);
    closers.push(() => client.close());
    expect(transport.sessionId).toBeDefined();
    await client.callTool({ name: "tool_search", arguments: { query: `select:${WRITE}` } });
    const before = lab.calls.write ?? 0;
    const result = await client.callTool({ name: WRITE, arguments: { query: "v1" } });
    expect(result.isError).toBeFalsy();
    expect(asked).toBe(1);
    expect(lab.calls.write).toBe(before + 1);
  });
});

/** A manual v2 client: round trips by hand, so a test can tamper with what it echoes. */
async function firstRound(conversation: string, query: string) {
  const client = await v2Client("pin", { conversation, manual: true });
  await promoteWrite(client);
  const round = (await client.callTool(
    { name: WRITE, arguments: { query } },
    { allowInputRequired: true },
  )) as unknown as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
  expect(round.resultType).toBe("input_required");
  expect(Object.keys(round.inputRequests)).toEqual(["approval"]);
  const retry = (
    state: string,
    args: Record<string, unknown> = { query },
    answer: unknown = allow("allow_once"),
    by: ClientV2 = client,
  ) =>
    by.callTool(
      { name: WRITE, arguments: args, inputResponses: { approval: answer }, requestState: state } as never,
      { allowInputRequired: true },
    );
  return { client, state: round.requestState, retry };
}

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: { code?: number; message?: string }) => `${error.code}: ${error.message}`,
  );

describe("attacks on the approval's requestState: refused, nothing run", () => {
  test("forged: a changed signature", async () => {
    const { state, retry } = await firstRound("forged", "forged");
    const before = lab.calls.write ?? 0;
    const [head, payload, signature] = state.split(".");
    const flipped = `${signature?.[0] === "A" ? "B" : "A"}${signature?.slice(1)}`;
    expect(await refusalOf(retry(`${head}.${payload}.${flipped}`))).toMatch(/-32602.*bad_signature/);
    expect(lab.calls.write ?? 0).toBe(before);
  });

  test("forged: a payload re-encoded with a later expiry keeps the old signature", async () => {
    const { state, retry } = await firstRound("forged-2", "forged2");
    const [head, payload, signature] = state.split(".");
    const body = JSON.parse(Buffer.from(payload ?? "", "base64url").toString()) as { exp: number };
    const later = Buffer.from(JSON.stringify({ ...body, exp: body.exp + 3_600_000 })).toString("base64url");
    const before = lab.calls.write ?? 0;
    expect(await refusalOf(retry(`${head}.${later}.${signature}`))).toMatch(/bad_signature/);
    expect(lab.calls.write ?? 0).toBe(before);
  });

  test("expired: the retry after the state's lifetime", async () => {
    const { state, retry } = await firstRound("expired", "expired");
    const before = lab.calls.write ?? 0;
    clock.skewMs += 11 * 60_000;
    try {
      expect(await refusalOf(retry(state))).toMatch(/-32602.*expired/);
    } finally {
      clock.skewMs = 0;
    }
    expect(lab.calls.write ?? 0).toBe(before);
  });

  test("replayed: the answered retry sent again runs nothing more", async () => {
    const { state, retry } = await firstRound("replayed", "replayed");
    const before = lab.calls.write ?? 0;
    const first = await retry(state);
    expect(first.isError).toBeFalsy();
    expect(lab.calls.write).toBe(before + 1);
    expect(await refusalOf(retry(state))).toMatch(/-32602.*replayed/);
    expect(lab.calls.write).toBe(before + 1);
  });

  test("another call: the state with other arguments", async () => {
    const { state, retry } = await firstRound("other-call", "approved");
    const before = lab.calls.write ?? 0;
    expect(await refusalOf(retry(state, { query: "something else" }))).toMatch(/-32602.*other_call/);
    expect(lab.calls.write ?? 0).toBe(before);
  });
});

describe("another user's requestState", () => {
  test("is refused for the other user, with nothing run", async () => {
    const users = createGatewayServer({ governance: lab.governance, clock });
    const served = await serveGatewayHttp(users, {
      authenticate: (request) => {
        const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
        return user === undefined ? undefined : { id: user, user };
      },
    });
    closers.push(async () => {
      await served.close();
      await users.close();
    });
    const connect = async (user: string) => {
      const client = new ClientV2(
        { name: user, version: "1" },
        {
          capabilities: { elicitation: { form: {} } },
          versionNegotiation: { mode: { pin: "2026-07-28" } },
          inputRequired: { autoFulfill: false },
        },
      );
      await client.connect(
        new HttpV2(new URL(served.url), {
          requestInit: { headers: { Authorization: `Bearer ${user}`, "Sciencegate-Conversation": "shared" } },
        }),
      );
      closers.push(() => client.close());
      await promoteWrite(client);
      return client;
    };
    const alice = await connect("alice");
    const bob = await connect("bob");
    const round = (await alice.callTool(
      { name: WRITE, arguments: { query: "alice" } },
      { allowInputRequired: true },
    )) as unknown as { requestState: string };
    const before = lab.calls.write ?? 0;
    const stolen = bob.callTool(
      {
        name: WRITE,
        arguments: { query: "alice" },
        inputResponses: { approval: allow("allow_always") },
        requestState: round.requestState,
      } as never,
      { allowInputRequired: true },
    );
    expect(await refusalOf(stolen)).toMatch(/-32602.*other_principal/);
    expect(lab.calls.write ?? 0).toBe(before);
  });
});

test("a gateway given createElicitationApproval (as the CLI does) asks 2026-07-28 clients by round trip too", async () => {
  const own = createGatewayServer({
    governance: lab.governance,
    approval: createElicitationApproval({ governance: lab.governance }),
  });
  const served = await serveGatewayHttp(own);
  closers.push(async () => {
    await served.close();
    await own.close();
  });
  const client = new ClientV2(
    { name: "cli-like", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  let asked = 0;
  client.setRequestHandler("elicitation/create", async () => {
    asked++;
    return allow("allow_once") as never;
  });
  await client.connect(new HttpV2(new URL(served.url)));
  closers.push(() => client.close());
  await promoteWrite(client);
  const before = lab.calls.write ?? 0;
  const result = await client.callTool({ name: WRITE, arguments: { query: "cli-like" } });
  expect(result.isError).toBeFalsy();
  expect(asked).toBe(1);
  expect(lab.calls.write).toBe(before + 1);
});
