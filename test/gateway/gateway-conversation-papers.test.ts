/**
 * A 2026-07-28 conversation's extracted papers live in the conversation store (text included), not in
 * the replica's memory or data directory: a second gateway over the same store (its own runtime and
 * data directory) lists and reads a paper the first one extracted, even once the file is gone; another
 * user's conversation, or another conversation of the same user, neither lists nor reads it. The
 * store's bounds (papers per conversation, bytes per paper, bytes in all) forget the oldest first.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ConversationPaper,
  type ConversationStateStore,
  MemoryConversationStateStore,
} from "../../src/gateway/gateway-conversation-store.js";
import { createGatewayServer, serveGatewayHttp } from "../../src/gateway/index.js";
import { createDownloadLab, PAPER_ID, PAPER_TEXT } from "./gateway-downloads-harness.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** One replica: its own runtime and data directory, a gateway over `store`, HTTP on loopback. */
async function replica(store: ConversationStateStore) {
  const lab = await createDownloadLab();
  closers.push(() => lab.close());
  const gateway = createGatewayServer({
    governance: lab.governance,
    eager: true,
    conversations: store,
    requestStateSecret: "a shared secret of the replicas, 32+ bytes long",
  });
  const http = await serveGatewayHttp(gateway, {
    authenticate: (request) => {
      const user = /^Bearer (alice|bob)$/.exec(request.headers.authorization ?? "")?.[1];
      return user === undefined ? undefined : { id: user, user };
    },
  });
  closers.push(async () => {
    await http.close();
    await gateway.close();
  });
  return { lab, url: http.url };
}

/** A 2026-07-28 client of one user and conversation that allows each approval form once. */
async function client(url: string, user: string, conversation: string) {
  const c = new ClientV2(
    { name: "papers-client", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  c.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { decision: "allow_once" },
  }));
  await c.connect(
    new HttpV2(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${user}`, "Sciencegate-Conversation": conversation } },
    }),
  );
  closers.push(() => c.close());
  return c;
}

type Result = { isError?: boolean; content: Array<Record<string, unknown>>; structuredContent?: unknown };

/** Prepares, downloads and extracts the paper in the client's conversation. */
async function extract(c: ClientV2) {
  const call = async (name: string, args: Record<string, unknown>) =>
    (await c.callTool({ name, arguments: args })) as Result;
  const prepared = await call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  expect(prepared.isError, JSON.stringify(prepared)).toBeFalsy();
  const { mcpInvocationId, artifacts } = prepared.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  const download = await call("artifact_download", {
    mcpInvocationId,
    candidateId: artifacts[0]?.candidateId ?? "",
  });
  expect(download.isError, JSON.stringify(download)).toBeFalsy();
  const { jobId } = download.structuredContent as { jobId: string };
  const result = await call("paper_extract_pdf", { artifactJobId: jobId });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return { jobId, result, uri: `sciencegate://papers/${jobId}/fulltext.md` };
}

describe("a 2026-07-28 conversation's papers, in the conversation store", () => {
  test("extracted through replica A, listed and read through replica B (its own data directory), the file gone; nobody else sees it", async () => {
    const store = new MemoryConversationStateStore();
    const a = await replica(store);
    const b = await replica(store);
    expect(a.lab.dataDir).not.toBe(b.lab.dataDir);
    const { jobId, result, uri } = await extract(await client(a.url, "alice", "study"));
    expect(result.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri }));
    // The text is read from the store, not from the extracting replica's files.
    rmSync(join(a.lab.dataDir, "papers", jobId), { recursive: true });

    const onB = await client(b.url, "alice", "study");
    const { resources } = await onB.listResources();
    expect(resources.filter((resource) => resource.uri.startsWith("sciencegate://papers/"))).toEqual([
      expect.objectContaining({ uri, mimeType: "text/markdown", name: `papers/${jobId}/fulltext.md` }),
    ]);
    const read = await onB.readResource({ uri });
    for (const line of PAPER_TEXT)
      expect(read.contents).toMatchObject([{ text: expect.stringContaining(line) }]);

    // Bob (same conversation handle) and alice's other conversation: nothing listed, nothing read.
    for (const other of [await client(b.url, "bob", "study"), await client(a.url, "alice", "other")]) {
      const listed = (await other.listResources()).resources.map((resource) => resource.uri);
      expect(listed).not.toContain(uri);
      // The 2026-07-28 revision's code for a resource not found (the SDK's ResourceNotFoundError).
      await expect(other.readResource({ uri })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("not an extraction of this session"),
      });
    }
  }, 60_000);
});

describe("MemoryConversationStateStore's papers", () => {
  const paper = (n: number, text = `text ${n}`): ConversationPaper => ({
    resource: { uri: `sciencegate://papers/job${n}/fulltext.md`, name: `papers/job${n}/fulltext.md` },
    text,
  });
  const uris = async (store: ConversationStateStore, key: string) =>
    (await store.listPapers(key)).map((resource) =>
      resource.uri.replace(/^sciencegate:\/\/papers\/|\/.*$/g, ""),
    );

  test("each conversation its own; the same uri again is known; a paper over the byte bound is not kept", async () => {
    const store = new MemoryConversationStateStore({ papers: { maxPaperBytes: 10 } });
    expect(await store.addPaper("k1", "o1", paper(1))).toBe("added");
    expect(await store.addPaper("k1", "o1", paper(1, "changed"))).toBe("known");
    expect(await store.addPaper("k1", "o1", paper(2, "x".repeat(11)))).toBe("too_large");
    expect(await store.addPaper("k1", "o1", paper(3, "é".repeat(6)))).toBe("too_large"); // 12 UTF-8 bytes
    expect(await uris(store, "k1")).toEqual(["job1"]);
    expect(await uris(store, "k2")).toEqual([]);
    expect(await store.readPaper("k1", paper(1).resource.uri)).toEqual(paper(1));
    expect(await store.readPaper("k2", paper(1).resource.uri)).toBeUndefined();
  });

  test("past the bounds the oldest are forgotten: papers per conversation, bytes in all", async () => {
    const store = new MemoryConversationStateStore({ papers: { maxPapers: 3, maxBytes: 40 } });
    for (const n of [1, 2, 3, 4, 5]) await store.addPaper("k1", "o1", paper(n, "x".repeat(10)));
    expect(await uris(store, "k1")).toEqual(["job3", "job4", "job5"]);
    // 30 bytes kept; a second conversation's 20 push out the oldest 10 of the process.
    await store.addPaper("k2", "o2", paper(6, "y".repeat(20)));
    expect(await uris(store, "k1")).toEqual(["job4", "job5"]);
    expect(await uris(store, "k2")).toEqual(["job6"]);
    expect(await store.readPaper("k1", paper(3).resource.uri)).toBeUndefined();
  });
});
