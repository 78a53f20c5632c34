/**
 * A 2026-07-28 conversation's extracted papers in PostgreSQL: two gateway replicas (each its own
 * runtime and data directory) over one real PostgreSQL; the paper extracted through replica A, which
 * then stops and whose files are removed, is listed and read through replica B; another user's
 * conversation of the same handle sees nothing. The store's bounds hold per conversation (count) and
 * per principal (bytes), and one principal never pushes out another's papers.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { openPostgres } from "../../src/core/index.js";
import type { ConversationPaper } from "../../src/gateway/gateway-conversation-store.js";
import {
  createGatewayServer,
  PostgresConversationStateStore,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import { createDownloadLab, PAPER_ID, PAPER_TEXT } from "./gateway-downloads-harness.js";

let server: TestPostgres;
beforeAll(async () => {
  server = await openTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

async function database(url: string) {
  const db = await openPostgres(url, { maxConnections: 4 });
  closers.push(() => db.close());
  return db;
}

async function replica(url: string) {
  const lab = await createDownloadLab();
  closers.push(() => lab.close());
  const gateway = createGatewayServer({
    governance: lab.governance,
    eager: true,
    conversations: await PostgresConversationStateStore.open(await database(url)),
    requestStateSecret: "a shared secret of the replicas, 32+ bytes long",
  });
  const http = await serveGatewayHttp(gateway, {
    authenticate: (request) => {
      const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
      return user === undefined ? undefined : { id: user, user };
    },
  });
  const stop = async () => {
    await http.close();
    await gateway.close();
  };
  closers.push(stop);
  return { lab, url: http.url, stop };
}

async function client(url: string, user: string) {
  const c = new ClientV2(
    { name: "papers-replica-client", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  c.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { decision: "allow_once" },
  }));
  await c.connect(
    new HttpV2(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${user}`, "Sciencegate-Conversation": "study" } },
    }),
  );
  closers.push(() => c.close());
  return c;
}

type Result = { isError?: boolean; content: Array<Record<string, unknown>>; structuredContent?: unknown };

test("extracted through replica A (then stopped, its files gone), listed and read through replica B; bob sees nothing", async () => {
  const url = await server.createDatabase();
  const a = await replica(url);
  const b = await replica(url);
  const onA = await client(a.url, "alice");
  const call = async (name: string, args: Record<string, unknown>) =>
    (await onA.callTool({ name, arguments: args })) as Result;
  const prepared = await call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  const { mcpInvocationId, artifacts } = prepared.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  const download = await call("artifact_download", {
    mcpInvocationId,
    candidateId: artifacts[0]?.candidateId ?? "",
  });
  const { jobId } = download.structuredContent as { jobId: string };
  const extracted = await call("paper_extract_pdf", { artifactJobId: jobId });
  expect(extracted.isError, JSON.stringify(extracted)).toBeFalsy();
  const uri = `sciencegate://papers/${jobId}/fulltext.md`;
  expect(extracted.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri }));
  await a.stop();
  rmSync(join(a.lab.dataDir, "papers"), { recursive: true });

  const onB = await client(b.url, "alice");
  const listed = (await onB.listResources()).resources.map((resource) => resource.uri);
  expect(listed).toEqual([uri]);
  const read = await onB.readResource({ uri });
  for (const line of PAPER_TEXT)
    expect(read.contents).toMatchObject([{ text: expect.stringContaining(line) }]);

  const bob = await client(b.url, "bob");
  expect((await bob.listResources()).resources).toEqual([]);
  await expect(bob.readResource({ uri })).rejects.toMatchObject({
    message: expect.stringContaining("not an extraction of this session"),
  });
}, 90_000);

test("the bounds in PostgreSQL: papers per conversation, bytes per principal; concurrent writers on two stores", async () => {
  const url = await server.createDatabase();
  const one = await PostgresConversationStateStore.open(await database(url), {
    papers: { maxPapers: 3, maxPaperBytes: 16, maxBytes: 40 },
  });
  const two = await PostgresConversationStateStore.open(await database(url), {
    papers: { maxPapers: 3, maxPaperBytes: 16, maxBytes: 40 },
  });
  const paper = (n: number, bytes = 10): ConversationPaper => ({
    resource: { uri: `sciencegate://papers/job${n}/fulltext.md`, name: `papers/job${n}/fulltext.md` },
    text: "x".repeat(bytes),
  });
  const jobs = async (key: string) =>
    (await one.listPapers(key)).map((resource) =>
      resource.uri.replace(/^sciencegate:\/\/papers\/|\/.*$/g, ""),
    );

  expect(await one.addPaper("k1", "alice", paper(1, 17))).toBe("too_large");
  // Five papers of one conversation from two replicas at once: three kept, the newest.
  await Promise.all([1, 2, 3, 4, 5].map((n) => (n % 2 ? one : two).addPaper("k1", "alice", paper(n))));
  expect(await jobs("k1")).toHaveLength(3);
  expect(await one.addPaper("k1", "alice", paper(9))).toBe("added");
  const kept = await jobs("k1");
  expect(kept).toHaveLength(3);
  expect(kept.at(-1)).toBe("job9");
  expect(await two.addPaper("k1", "alice", paper(9))).toBe("known");

  // Bob's papers are his own account: alice's bytes are not pushed out by his.
  await two.addPaper("kb", "bob", paper(20, 16));
  await two.addPaper("kb", "bob", paper(21, 16));
  await two.addPaper("kb", "bob", paper(22, 16));
  expect(await jobs("kb")).toEqual(["job21", "job22"]);
  expect(await jobs("k1")).toEqual(kept);
  // Alice's second conversation counts against her 40 bytes: her oldest paper goes.
  await one.addPaper("k2", "alice", paper(30, 16));
  expect(await jobs("k2")).toEqual(["job30"]);
  expect(await jobs("k1")).toEqual(kept.slice(-2));
  expect((await one.readPaper("k2", paper(30).resource.uri))?.text).toBe("x".repeat(16));
  expect(await one.readPaper("kb", paper(30).resource.uri)).toBeUndefined();
}, 60_000);
