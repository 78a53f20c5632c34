/**
 * An upstream server's question during a 2026-07-28 client's call, on two gateway replicas (each its
 * own runtime, data directory and upstream process) over one real PostgreSQL. The question is held on
 * the replica that asked: a retry that reaches the other replica is refused with an error that says
 * why (a 2025-11-25 server's question is a request in flight on that replica's connection and cannot
 * move) and runs nothing; the same retry on the replica that asked runs the call once, one ledger row.
 * The 2026-07-28 server's round is pinned as held the same way today (ARCHITECTURE.md, "The governed
 * MCP gateway"; docs/gateway/revisions.md, "Upstream questions during a call").
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { createGatewayServer, serveGatewayHttp } from "../../src/gateway/index.js";
import { createGovernance } from "../../src/runtime/create-governance.js";
import { effectsFile, stdioUpstream } from "../mcp/upstream-fixture.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

const SECRET = "a shared secret of the replicas, 32+ bytes long";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

async function replica(url: string, effects: string, modernOnly: boolean) {
  const governance = await createGovernance({
    config: { servers: [stdioUpstream("up", { effects, modernOnly })] },
    manifests: { builtin: false, dirs: [] },
    storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-upq-")), postgres: url },
  });
  const gateway = createGatewayServer({
    governance,
    eager: true,
    toolNames: "upstream",
    requestStateSecret: SECRET,
  });
  const http = await serveGatewayHttp(gateway);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await http.close();
    await gateway.close();
    await governance.close();
  };
  closers.push(stop);
  return { governance, url: http.url, stop };
}

async function client(url: string, conversation = "asked") {
  const c = new ClientV2(
    { name: "upstream-question-client", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: false },
    },
  );
  await c.connect(
    new HttpV2(new URL(url), { requestInit: { headers: { "Sciencegate-Conversation": conversation } } }),
  );
  closers.push(() => c.close());
  return c;
}

interface Round {
  resultType: string;
  requestState: string;
  inputRequests: Record<string, { method: string; params: { message?: string } }>;
}

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: { code?: number; message?: string }) => `${error.code}: ${error.message}`,
  );

async function askedOn(onA: ClientV2) {
  const args = { action: "launch" };
  const call = (by: ClientV2, extra: Record<string, unknown> = {}) =>
    by.callTool({ name: "confirm_action", arguments: args, ...extra } as never, {
      allowInputRequired: true,
    }) as unknown as Promise<Round & { content?: Array<{ text?: string }>; isError?: boolean }>;
  // The gateway's own approval first (any replica may answer it), then the server's question.
  const approval = await call(onA);
  expect(Object.keys(approval.inputRequests)).toEqual(["approval"]);
  const asked = await call(onA, {
    inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
    requestState: approval.requestState,
  });
  expect(asked.resultType).toBe("input_required");
  const [key, question] = Object.entries(asked.inputRequests)[0] ?? [];
  expect(question?.params.message).toBe("Really launch?");
  const answer = {
    inputResponses: { [key as string]: { action: "accept", content: { confirm: true } } },
    requestState: asked.requestState,
  };
  return { call, answer };
}

const launched = (effects: ReturnType<typeof effectsFile>) =>
  effects.lines().filter((line) => line.startsWith("effect confirm_action"));

describe("a 2025-11-25 upstream server's question (mid-call, held on the replica that asked)", () => {
  test("the retry on replica B is refused (saying why) and runs nothing; on replica A it runs once, one row", async () => {
    const url = await server.createDatabase();
    const effects = effectsFile();
    const a = await replica(url, effects.path, false);
    const b = await replica(url, effects.path, false);
    const onB = await client(b.url);
    const { call, answer } = await askedOn(await client(a.url));

    expect(await refusalOf(call(onB, answer))).toMatch(
      /MCP 2025-11-25\) asked mid-call.*cannot move to another replica/,
    );
    expect(launched(effects)).toEqual([]);

    const done = await call(await client(a.url), answer);
    expect(done.content?.map((c) => c.text).join("")).toBe("done: launch");
    expect(launched(effects)).toEqual(["effect confirm_action launch"]);
    // One invocation row in the shared ledger, whichever replica reads it.
    const rows = (await b.governance.ledger.query({})).filter((row) => row.toolId === "confirm_action");
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
    // The answered state again, on either replica: refused, nothing more runs.
    expect(await refusalOf(call(onB, answer))).toMatch(/-32602/);
    expect(await refusalOf(call(await client(a.url), answer))).toMatch(/-32602/);
    expect(launched(effects)).toHaveLength(1);
  }, 90_000);
});

describe("a 2026-07-28 upstream server's input_required round (paused, recorded in the shared ledger)", () => {
  test("asked on replica A, answered on replica B: the call runs once, one row; the state again is refused on both", async () => {
    const url = await server.createDatabase();
    const effects = effectsFile();
    const a = await replica(url, effects.path, true);
    const b = await replica(url, effects.path, true);
    const onA = await client(a.url);
    const onB = await client(b.url);
    const { call, answer } = await askedOn(onA);
    expect(launched(effects)).toEqual([]);

    const done = await call(onB, answer);
    expect(done.content?.map((c) => c.text).join("")).toBe("done: launch");
    expect(launched(effects)).toEqual(["effect confirm_action launch"]);
    const rows = (await a.governance.ledger.query({})).filter((row) => row.toolId === "confirm_action");
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
    const decisions = (await a.governance.ledger.listAuthorizations({}))
      .filter((row) => row.toolId === "confirm_action")
      .map((row) => row.decisionSource);
    expect(decisions).toEqual(["user_once", "upstream_asked", "user_answered"]);

    expect(await refusalOf(call(onB, answer))).toMatch(/-32602.*replayed/);
    expect(await refusalOf(call(onA, answer))).toMatch(/-32602.*replayed/);
    expect(launched(effects)).toHaveLength(1);
  }, 90_000);

  test("replica A stopped between the round trips: B continues the call, once", async () => {
    const url = await server.createDatabase();
    const effects = effectsFile();
    const a = await replica(url, effects.path, true);
    const b = await replica(url, effects.path, true);
    const { call, answer } = await askedOn(await client(a.url));
    await a.stop();
    const done = await call(await client(b.url), answer);
    expect(done.content?.map((c) => c.text).join("")).toBe("done: launch");
    expect(launched(effects)).toEqual(["effect confirm_action launch"]);
    const rows = (await b.governance.ledger.query({})).filter((row) => row.toolId === "confirm_action");
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
  }, 90_000);

  test("a forged state, or the state in another conversation, answers nothing", async () => {
    const url = await server.createDatabase();
    const effects = effectsFile();
    const a = await replica(url, effects.path, true);
    const b = await replica(url, effects.path, true);
    const { call, answer } = await askedOn(await client(a.url));
    const onB = await client(b.url);
    // The answers travel in the state: other answers in its payload, its signature kept, are refused.
    const [head, payload, signature] = answer.requestState.split(".");
    const decoded = JSON.parse(Buffer.from(payload as string, "base64url").toString("utf8"));
    const forged = Buffer.from(JSON.stringify({ ...decoded, answers: [{ action: "accept" }] })).toString(
      "base64url",
    );
    expect(await refusalOf(call(onB, { ...answer, requestState: `${head}.${forged}.${signature}` }))).toMatch(
      /-32602.*bad_signature/,
    );
    // The same state for another conversation (another session of the same user) is another call's.
    const other = await client(b.url, "elsewhere");
    expect(await refusalOf(call(other, answer))).toMatch(/-32602.*other_call/);
    expect(launched(effects)).toEqual([]);
    // The state is still good for the call it belongs to.
    const done = await call(onB, answer);
    expect(done.content?.map((c) => c.text).join("")).toBe("done: launch");
  }, 90_000);
});
