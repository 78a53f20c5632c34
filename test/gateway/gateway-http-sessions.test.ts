/**
 * Attacks on the gateway's HTTP sessions with raw and SDK clients on a loopback port: an id read in the
 * ledger used to answer another session's approval question, call its tools and end it; another
 * principal holding a session's transport id; a flood of `initialize`; clients that leave without
 * `DELETE`; a question nobody answers; reused JSON-RPC request ids.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  createElicitationApproval,
  createGatewayServer,
  type GatewayHttpOptions,
  type GatewayHttpServer,
  type GatewayServer,
  type GatewayServerOptions,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { createLab, type Lab } from "./gateway-harness.js";
import {
  connectHttpClient,
  initializeBody,
  MCP_POST_HEADERS,
  messagesOf,
  rawRequest,
} from "./http-client.js";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
let http: GatewayHttpServer | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
  http = undefined;
  gateway = undefined;
  lab = undefined;
});

async function serve(
  options: GatewayHttpOptions = {},
  gatewayOptions: (made: Lab) => Omit<GatewayServerOptions, "governance"> = () => ({}),
) {
  lab = await createLab(options.clock ? { clock: options.clock } : {});
  gateway = createGatewayServer({ governance: lab.governance, eager: true, ...gatewayOptions(lab) });
  const errors: string[] = [];
  http = await serveGatewayHttp(gateway, {
    onError: (error) => errors.push(String(error)),
    ...options,
  });
  return { lab, gateway, http, errors };
}

/**
 * A client that declares elicitation and answers each question with `answer` (which may wait); its
 * transport sends `headers` with every request.
 */
async function askedClient(
  url: string,
  answer: () => Promise<ElicitResult>,
  headers: Record<string, string> = {},
) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "victim", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  let asked = 0;
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked++;
    return answer();
  });
  await client.connect(transport);
  clients.push(client);
  return {
    client,
    transport,
    asked: () => asked,
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

/** A promise and its resolver. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const DENY: ElicitResult = { action: "accept", content: { decision: "deny", message: "no writes" } };
const ALLOW_ALWAYS = { action: "accept", content: { decision: "allow_always" } };

/** What a holder of `sessionHeader` tries against a session: answer its question, call, list, end it. */
async function takeOver(url: string, sessionHeader: string, headers: Record<string, string> = {}) {
  const post = (body: unknown) =>
    rawRequest(url, {
      headers: { ...MCP_POST_HEADERS, ...headers, "Mcp-Session-Id": sessionHeader },
      body: JSON.stringify(body),
    });
  // The gateway's first requests to a client are numbered from 0: its question is one of these.
  const answers = await Promise.all(
    [0, 1, 2].map((id) => post({ jsonrpc: "2.0", id, result: ALLOW_ALWAYS })),
  );
  const call = await post({
    jsonrpc: "2.0",
    id: "attacker-1",
    method: "tools/call",
    params: { name: "mcp__lab__write", arguments: { query: "attacker" } },
  });
  const listen = await rawRequest(url, {
    method: "GET",
    headers: { Accept: "text/event-stream", ...headers, "Mcp-Session-Id": sessionHeader },
  }).catch(() => ({ status: -1 }));
  const end = await rawRequest(url, {
    method: "DELETE",
    headers: { ...headers, "Mcp-Session-Id": sessionHeader },
  });
  return {
    statuses: [...answers.map((a) => a.status), call.status, listen.status, end.status],
    call,
  };
}

describe("no transport identifier is a credential", () => {
  test("the session id shown in the ledger answers nothing: its pending question, its tools and DELETE are 404; the human's deny stands and no write runs", async () => {
    const { lab, gateway, http, errors } = await serve();
    const attacked = deferred<void>();
    const victim = await askedClient(http.url, async () => {
      await attacked.promise;
      return DENY;
    });
    // A safe call leaves a ledger row with the session's governance id, which anyone reading the
    // ledger (`sciencegate audit`, the console) sees.
    await victim.call("mcp__lab__search", { query: "x" });
    const [row] = await lab.governance.ledger.query();
    const published = row?.sessionId as string;
    expect(published).toMatch(/^gateway:/);

    const pending = victim.call("mcp__lab__write", { query: "victim" });
    await vi.waitFor(() => expect(lab.governance.permissions.listPending()).toHaveLength(1));
    for (const header of [published, published.slice("gateway:".length)]) {
      const attempt = await takeOver(http.url, header);
      expect(attempt.statuses).toEqual([404, 404, 404, 404, 404, 404]);
    }
    attacked.resolve();
    const result = await pending;
    expect(result.structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("no writes"),
    });
    expect(lab.calls.write).toBeUndefined();
    expect(victim.asked()).toBe(1);
    expect(
      (await lab.governance.ledger.listAuthorizations({ sessionId: published })).map((a) => a.decisionSource),
    ).toEqual(["policy_not_dangerous", "user_deny"]);
    expect(lab.governance.permissions.approvalMode(published)).toBe("ask_for_dangerous");
    // The victim's session is untouched, and the transport id is nowhere a reader could see it.
    expect(gateway.sessions().map((s) => s.sessionId)).toEqual([published]);
    const transportId = victim.transport.sessionId as string;
    const stored = JSON.stringify([
      await lab.governance.ledger.query(),
      await lab.governance.ledger.listAuthorizations({}),
    ]);
    expect(stored).not.toContain(transportId);
    expect(errors.join("\n")).not.toContain(transportId);
  });

  test("another principal holding the transport id itself gets 404 for everything; the owner's answer is the one recorded", async () => {
    const tokens: Record<string, string> = { "alice-token": "alice", "bob-token": "bob" };
    const { lab, http } = await serve({
      authenticate: (request) => {
        const id = tokens[/^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1] ?? ""];
        return id ? { id } : undefined;
      },
    });
    const attacked = deferred<void>();
    const alice = await askedClient(
      http.url,
      async () => {
        await attacked.promise;
        return DENY;
      },
      { Authorization: "Bearer alice-token" },
    );
    const pending = alice.call("mcp__lab__write", { query: "alice" });
    await vi.waitFor(() => expect(lab.governance.permissions.listPending()).toHaveLength(1));
    const leaked = alice.transport.sessionId as string;
    const bob = await takeOver(http.url, leaked, { Authorization: "Bearer bob-token" });
    expect(bob.statuses).toEqual([404, 404, 404, 404, 404, 404]);
    const nobody = await takeOver(http.url, leaked);
    expect(nobody.statuses).toEqual([401, 401, 401, 401, 401, 401]);
    attacked.resolve();
    expect((await pending).structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(lab.calls.write).toBeUndefined();
    // Alice's session still serves Alice.
    expect((await alice.call("mcp__lab__search", { query: "y" })).isError).toBeUndefined();
  });

  test("token and authenticate together are refused at start-up", async () => {
    lab = await createLab();
    gateway = createGatewayServer({ governance: lab.governance });
    await expect(
      serveGatewayHttp(gateway, { token: "0123456789abcdef0123", authenticate: () => ({ id: "x" }) }),
    ).rejects.toMatchObject({ code: "INVALID_CONFIG", message: expect.stringContaining("authenticate") });
  });
});

describe("sessions: nobody locks others out", () => {
  test("100 initialize requests from one client do not lock out the next: its own unused sessions make way", async () => {
    const { http } = await serve();
    const flood = [];
    for (let i = 0; i < 100; i++) {
      flood.push((await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() })).status);
    }
    expect(flood.every((status) => status === 200)).toBe(true);
    expect(http.sessionCount()).toBeLessThanOrEqual(64);
    const next = await connectHttpClient(http.url);
    clients.push(next.client);
    expect(await next.toolNames()).toContain("tool_search");
    expect(http.stats().sessionsEvicted).toBeGreaterThanOrEqual(36);
  });

  test("bare initialize requests left unused for 10 s make way before an older session that is in use", async () => {
    const clock = new ManualClock(0);
    const { http } = await serve({ clock, maxSessions: 4, maxSessionsPerClient: 4 });
    const legit = await connectHttpClient(http.url);
    clients.push(legit.client);
    await legit.toolNames();
    await clock.advance(1_000);
    for (let i = 0; i < 3; i++) {
      expect((await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() })).status).toBe(
        200,
      );
    }
    await clock.advance(10_000);
    const next = await connectHttpClient(http.url);
    clients.push(next.client);
    expect(http.stats().sessionsEvicted).toBe(1);
    // The least recently used session is the legit one, but an abandoned one went first.
    expect(await legit.toolNames()).toContain("tool_search");
  });

  test("a session that made no request after initialize expires after unusedSessionTimeoutMs; a used one lives for idleTimeoutMs", async () => {
    const clock = new ManualClock(0);
    const { http } = await serve({ clock, unusedSessionTimeoutMs: 5_000, idleTimeoutMs: 60_000 });
    const unused = await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() });
    expect(unused.status).toBe(200);
    const used = await connectHttpClient(http.url);
    clients.push(used.client);
    await used.toolNames();
    expect(http.sessionCount()).toBe(2);
    await vi.waitFor(async () => {
      await clock.advance(1_000);
      expect(http.sessionCount()).toBe(1);
    });
    expect(clock.now()).toBeLessThan(10_000);
    expect(await used.toolNames()).toContain("tool_search");
  });

  test.each([
    ["the client's bound", { maxSessions: 3, maxSessionsPerClient: 2 }, 429, "this client has 2 open"],
    ["the gateway's bound", { maxSessions: 2, maxSessionsPerClient: 5 }, 503, "at most 2"],
  ])(
    "%s: the least recently used idle session makes way; sessions with a request running are kept, and when all run one, initialize is refused",
    async (_name, limits, status, message) => {
      const { lab, http } = await serve(limits);
      const old = await connectHttpClient(http.url);
      const busy = await connectHttpClient(http.url);
      clients.push(old.client, busy.client);
      await old.toolNames();
      const running = busy.call("mcp__lab__slow", { query: "x" });
      running.catch(() => undefined);
      await lab.slowStarted;
      const fresh = await connectHttpClient(http.url);
      clients.push(fresh.client);
      // The idle one made way: its client gets 404 and would start over; the busy one is kept.
      await expect(old.client.listTools()).rejects.toMatchObject({ code: 404 });
      expect(http.sessionCount()).toBe(2);
      expect(http.stats().sessionsEvicted).toBe(1);
      const slow2 = fresh.call("mcp__lab__slow", { query: "y" });
      slow2.catch(() => undefined);
      await vi.waitFor(() => expect(lab.calls.slow).toBe(2));
      const refused = await rawRequest(http.url, { headers: MCP_POST_HEADERS, body: initializeBody() });
      expect(refused).toMatchObject({
        status,
        headers: { "retry-after": expect.any(String) },
        json: { error: { message: expect.stringContaining(message) } },
      });
    },
  );

  test("a question nobody answers expires after the default wait (10 minutes): the call is denied and audited, and the session is then idle-closed", async () => {
    const clock = new ManualClock(0);
    const { lab, gateway, http } = await serve({ clock, idleTimeoutMs: 60_000 }, (made) => ({
      approval: createElicitationApproval({ governance: made.governance, clock }),
    }));
    const asked = await askedClient(http.url, () => new Promise<ElicitResult>(() => {}));
    const [session] = gateway.sessions();
    const stuck = asked.call("mcp__lab__write", { query: "x" });
    await vi.waitFor(() => expect(lab.governance.permissions.listPending()).toHaveLength(1));
    // While the question waits, the session is not idle: the call is running.
    await clock.advance(9 * 60_000);
    expect(http.sessionCount()).toBe(1);
    expect(lab.governance.permissions.listPending()).toHaveLength(1);
    await clock.advance(60_000);
    expect((await stuck).structuredContent).toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("nobody answered the approval request within 600000 ms"),
    });
    expect(lab.calls.write).toBeUndefined();
    const rows = await lab.governance.ledger.listAuthorizations({ sessionId: session?.sessionId as string });
    expect(rows.map((row) => row.decisionSource)).toEqual(["wait_timeout"]);
    await vi.waitFor(async () => {
      await clock.advance(10_000);
      expect(http.sessionCount()).toBe(0);
    });
    expect(clock.now()).toBeLessThanOrEqual(10 * 60_000 + 80_000);
  });

  test("DELETE is honoured: the session is closed and its slot is free at once", async () => {
    const { http } = await serve({ maxSessions: 1 });
    const a = await connectHttpClient(http.url);
    await a.transport.terminateSession();
    expect(http.sessionCount()).toBe(0);
    await a.client.close();
  });
});

describe("JSON-RPC request ids", () => {
  test("a batch of 5 requests with one id runs none of them: 400 -32600", async () => {
    const { lab, http } = await serve();
    const a = await connectHttpClient(http.url);
    clients.push(a.client);
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "mcp__lab__search", arguments: { query: "dup" } },
    };
    const response = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, "Mcp-Session-Id": a.mcpSessionId },
      body: JSON.stringify([call, call, call, call, call]),
    });
    expect(response).toMatchObject({
      status: 400,
      json: { error: { code: -32600, message: expect.stringContaining("in this batch") } },
    });
    expect(lab.calls.search).toBeUndefined();
    // Distinct ids are answered, each.
    const distinct = await rawRequest(http.url, {
      headers: { ...MCP_POST_HEADERS, "Mcp-Session-Id": a.mcpSessionId },
      body: JSON.stringify([1, 2, 3].map((id) => ({ ...call, id }))),
    });
    expect(distinct.status).toBe(200);
    expect(
      messagesOf(distinct)
        .map((m) => (m as { id: number }).id)
        .sort(),
    ).toEqual([1, 2, 3]);
    expect(lab.calls.search).toBe(3);
  });

  test("a request under the id of one still running in the session is refused; the running one answers", async () => {
    const { lab, http } = await serve();
    const a = await connectHttpClient(http.url);
    clients.push(a.client);
    const headers = { ...MCP_POST_HEADERS, "Mcp-Session-Id": a.mcpSessionId };
    const slow = rawRequest(http.url, {
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "x",
        method: "tools/call",
        params: { name: "mcp__lab__slow", arguments: { query: "1" } },
      }),
    });
    await lab.slowStarted;
    const again = await rawRequest(http.url, {
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "x",
        method: "tools/call",
        params: { name: "mcp__lab__search", arguments: { query: "2" } },
      }),
    });
    expect(again).toMatchObject({ status: 400, json: { error: { code: -32600 } } });
    expect(lab.calls.search).toBeUndefined();
    await rawRequest(http.url, {
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "x" } }),
    });
    // The first request under the id was the one that ran, and it is the one cancelled.
    await lab.slowAborted;
    expect(lab.calls.slow).toBe(1);
    void slow;
  });
});
