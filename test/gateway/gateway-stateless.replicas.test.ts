/**
 * Two gateway replicas (each its own runtime, gateway and HTTP server) over one real PostgreSQL: a
 * 2026-07-28 client's approval asked on replica A, which then shuts down, is answered on replica B;
 * the call runs exactly once with one ledger row. The conversation's promotions made on A are seen on B.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { openPostgres } from "../../src/core/index.js";
import {
  createGatewayServer,
  PostgresConversationStateStore,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { PostgresLedger } from "../../src/governance/audit/index.js";
import { openSharedSessionState } from "../../src/runtime/index.js";
import { createLabRuntime } from "../nodes/approval-harness.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

const WRITE = "mcp__lab__write";
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

async function replica(url: string, calls: Record<string, number>) {
  const db = await openPostgres(url, { maxConnections: 4 });
  closers.push(() => db.close());
  const ledger = await PostgresLedger.open(db);
  const rt = await createLabRuntime({}, { sessionState: await openSharedSessionState(db), ledger, calls });
  closers.push(() => rt.close());
  const gateway = createGatewayServer({
    governance: rt.governance,
    requestStateSecret: SECRET,
    conversations: await PostgresConversationStateStore.open(db),
  });
  const http = await serveGatewayHttp(gateway);
  const stop = async () => {
    await http.close();
    await gateway.close();
  };
  closers.push(stop);
  return { rt, url: http.url, stop, ledger };
}

async function client(url: string) {
  const c = new Client(
    { name: "replica-client", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: false },
    },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { "Sciencegate-Conversation": "replicated" } },
    }),
  );
  closers.push(() => c.close());
  return c;
}

test("asked on replica A (then stopped), answered on replica B: one upstream call, one ledger row", async () => {
  const url = await server.createDatabase();
  const calls: Record<string, number> = {};
  const a = await replica(url, calls);
  const b = await replica(url, calls);
  const onA = await client(a.url);
  await onA.callTool({ name: "tool_search", arguments: { query: `select:${WRITE}` } });
  const round = (await onA.callTool(
    { name: WRITE, arguments: { query: "replicated" } },
    { allowInputRequired: true },
  )) as unknown as { resultType: string; requestState: string };
  expect(round.resultType).toBe("input_required");
  await a.stop();

  const onB = await client(b.url);
  // The promotion made on A is the conversation's, in the database: B lists the tool.
  expect((await onB.listTools()).tools.map((tool) => tool.name)).toContain(WRITE);
  const result = await onB.callTool(
    {
      name: WRITE,
      arguments: { query: "replicated" },
      inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
      requestState: round.requestState,
    } as never,
    { allowInputRequired: true },
  );
  expect(result.isError).toBeFalsy();
  expect(calls).toEqual({ "write:replicated": 1 });
  expect(await b.ledger.count({ toolId: "write" })).toBe(1);
  const [row] = await b.ledger.query({ toolId: "write" });
  expect(row?.status).toBe("ok");
  const sources = (await b.ledger.listAuthorizations()).map((auth) => auth.decisionSource);
  expect(sources).toEqual(["user_once"]);

  // The same retry again, on B: refused, nothing more runs.
  const again = onB.callTool(
    {
      name: WRITE,
      arguments: { query: "replicated" },
      inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
      requestState: round.requestState,
    } as never,
    { allowInputRequired: true },
  );
  await expect(again).rejects.toMatchObject({ code: -32602 });
  expect(calls).toEqual({ "write:replicated": 1 });
  expect(await b.ledger.count({ toolId: "write" })).toBe(1);
});
