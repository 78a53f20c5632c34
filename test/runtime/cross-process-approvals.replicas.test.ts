/**
 * Approvals and interrupted threads move between replicas that are separate Node processes over one
 * real PostgreSQL: two `replicas/governed-agent-replica.ts` processes (tsx), each with its own
 * `createGovernance({ storage: { postgres } })` runtime and its own `PostgresSaver`, serve one governed
 * agent. Every MCP call makes one HTTP request to a loopback counter in this process, so "ran exactly
 * once" is counted across processes. What the human or the app decides on A is honoured on B.
 * Slow (processes, a database): `npm run test:replicas`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AuthorizationRecord, InvocationRecord } from "../../src/governance/audit/index.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import type {
  CallSpec,
  ReplicaCommand,
  ReplicaPlan,
  ReplySpec,
  SeenInterrupt,
  SeenToolMessage,
} from "./replicas/governed-agent-replica.js";

const WORKER = fileURLToPath(new URL("./replicas/governed-agent-replica.ts", import.meta.url));

/** What a `run` command answers. */
interface RunReply {
  interrupts: SeenInterrupt[];
  tools: SeenToolMessage[];
  messageIds: string[];
  boundTools: string[][];
  modelTurns: number;
}

/** What a `state` command answers. */
interface StateReply {
  approvalMode: string;
  surface: string[];
  grants: string[];
  invocations: InvocationRecord[];
  authorizations: AuthorizationRecord[];
}

/** The counter every tool call reports to: `tool:query` -> the replicas that ran it, in order. */
function startCounter() {
  const hits = new Map<string, string[]>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const key = url.searchParams.get("key") ?? "?";
    hits.set(key, [...(hits.get(key) ?? []), url.searchParams.get("replica") ?? "?"]);
    res.end("ok");
  });
  return {
    hits,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A replica process, driven by JSON lines. */
class Replica {
  readonly name: string;
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly exited: Promise<number | null>;
  #next = 0;
  #stderr = "";

  private constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.#child = child;
    this.exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    void this.exited.then((code) => {
      for (const { reject } of this.#waiting.values()) {
        reject(new Error(`replica ${name} exited (${code}): ${this.#stderr}`));
      }
    });
  }

  static async start(plan: ReplicaPlan): Promise<Replica> {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, JSON.stringify(plan)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const replica = new Replica(plan.replica, child);
    child.stderr!.on("data", (chunk) => {
      replica.#stderr += String(chunk);
    });
    let onReady = () => {};
    const ready = new Promise<void>((resolve) => {
      onReady = resolve;
    });
    let buffered = "";
    child.stdout!.on("data", (chunk) => {
      buffered += String(chunk);
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = JSON.parse(buffered.slice(0, nl)) as {
          ready?: true;
          id?: number;
          ok?: boolean;
          error?: string;
        };
        buffered = buffered.slice(nl + 1);
        if (line.ready) onReady();
        if (line.id === undefined) continue;
        const waiting = replica.#waiting.get(line.id);
        replica.#waiting.delete(line.id);
        if (line.ok) waiting?.resolve(line);
        else waiting?.reject(new Error(`replica ${plan.replica}: ${line.error}`));
      }
    });
    await Promise.race([
      ready,
      replica.exited.then((code) => {
        throw new Error(`replica ${plan.replica} exited (${code}) before it was ready: ${replica.#stderr}`);
      }),
    ]);
    return replica;
  }

  send<T>(command: ReplicaCommand): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.stdin!.write(`${JSON.stringify({ id, ...command })}\n`);
    });
  }

  run(
    thread: string,
    input: { user: string } | { resume: Record<string, unknown> },
    replies: ReplySpec[],
    cardFormat?: "native" | "hitl",
  ) {
    return this.send<RunReply>({ cmd: "run", thread, input, replies, ...(cardFormat ? { cardFormat } : {}) });
  }

  state(session: string, threadId?: string) {
    return this.send<StateReply>({ cmd: "state", session, ...(threadId ? { threadId } : {}) });
  }

  broker(call: CallSpec) {
    return this.send<{ outcome: string; invocationId?: string; replayed?: boolean }>({ cmd: "broker", call });
  }

  /** Closes the runtime and the checkpointer; the process then exits on its own. */
  async close(): Promise<number | null> {
    if (this.#child.exitCode !== null) return this.#child.exitCode;
    await this.send({ cmd: "close" });
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  kill(): void {
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }
}

const dangerous = makeTool({
  id: "write",
  readOnly: false,
  permission: {
    action: "lab:write",
    resourceTemplate: "lab:write:{query}",
    summaryTemplate: 'write "{query}" in the lab',
  },
  routing: { keywords: [], mode: "off", priority: 0 },
});
const safe = makeTool({ id: "search", routing: { keywords: [], mode: "off", priority: 0 } });

let pg: TestPostgres;
let scratch: string;
const counter = startCounter();
let a: Replica;
let b: Replica;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "sciencegate-cross-process-"));
  const manifestDir = join(scratch, "manifests");
  await mkdir(manifestDir);
  await writeFile(
    join(manifestDir, "lab.json"),
    JSON.stringify(makeSource({ id: "lab", tools: [dangerous, safe] })),
  );
  const [server, counterUrl] = await Promise.all([openTestPostgres(), counter.listen()]);
  pg = server;
  const url = await pg.createDatabase();
  // The checkpointer's tables, once (as a deployment migrates before it starts its replicas).
  const saver = PostgresSaver.fromConnString(url);
  await saver.setup();
  await saver.end();
  const plan = (replica: string): ReplicaPlan => ({
    replica,
    url,
    counterUrl,
    manifestDir,
    dataDir: join(scratch, "shared-data"),
  });
  [a, b] = await Promise.all([Replica.start(plan("A")), Replica.start(plan("B"))]);
}, 90_000);

afterAll(async () => {
  const codes = await Promise.all([a?.close(), b?.close()].map((p) => p?.catch(() => -1)));
  a?.kill();
  b?.kill();
  await counter.close();
  await pg?.stop();
  await rm(scratch, { recursive: true, force: true });
  // Both replicas closed cleanly: runtime, pool, listeners and checkpointer released, exit code 0.
  expect(codes).toEqual([0, 0]);
}, 60_000);

/** Scripted replies: load the lab tools, then one turn of dangerous writes (explicit ids). */
const loadTools = (thread: string): ReplySpec => ({
  id: `${thread}-ai-load`,
  calls: [
    { name: "tool_search", args: { query: "select:mcp__lab__write,mcp__lab__search" }, id: `${thread}-load` },
  ],
});
const writes = (thread: string, turn: string, ...queries: string[]): ReplySpec => ({
  id: `${thread}-ai-${turn}`,
  calls: queries.map((query) => ({
    name: "mcp__lab__write",
    args: { query },
    id: `${thread}-call-${query}`,
  })),
});
const done = (thread: string, turn: string): ReplySpec => ({ id: `${thread}-ai-${turn}`, text: "done" });

const hitsOf = (query: string) => counter.hits.get(`write:${query}`) ?? [];
const toolMessage = (reply: RunReply, callId: string) => reply.tools.find((t) => t.toolCallId === callId);

/** Polls a replica until `check` passes (a change arrives by NOTIFY, at most 2 s late by polling). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("approvals across replica processes on one PostgreSQL", () => {
  test("a grant answered on A (approve, scope matching) lets B run a matching call without a card", async () => {
    const t = "grant";
    const paused = await a.run(t, { user: "go" }, [loadTools(t), writes(t, "1", "g1")], "hitl");
    expect(paused.interrupts).toHaveLength(1);
    const card = paused.interrupts[0]!;
    const answered = await a.run(
      t,
      { resume: { [card.id]: { decisions: [{ type: "approve", scope: "matching" }] } } },
      [done(t, "2")],
      "hitl",
    );
    expect(answered.interrupts).toEqual([]);
    expect(hitsOf("g1")).toEqual(["A"]);

    // The thread continues on B: a matching write runs there without a card.
    const onB = await b.run(t, { user: "again" }, [writes(t, "3", "g2"), done(t, "4")], "hitl");
    expect(onB.interrupts).toEqual([]);
    expect(toolMessage(onB, `${t}-call-g2`)?.status).not.toBe("error");
    expect(hitsOf("g2")).toEqual(["B"]);
    // The thread's history followed it to B: A's messages and B's, each id once.
    expect(onB.messageIds).toEqual(
      expect.arrayContaining([`${t}-ai-1`, `${t}-ai-2`, `${t}-ai-3`, `${t}-ai-4`]),
    );
    expect(new Set(onB.messageIds).size).toBe(onB.messageIds.length);
    const seen = await b.state(t, t);
    expect(seen.grants).toEqual(["lab:write"]);
    expect(seen.authorizations.map((row) => row.decisionSource)).toEqual(["user_grant", "existing_grant"]);
    const row = seen.invocations.find((r) => r.toolCallId === `${t}-call-g2`);
    expect(row?.status).toBe("ok");
    expect(row?.authorizationId).toBe(seen.authorizations[1]?.id);

    // A grant the app records on A (`decide` with allow_matching) covers B's broker calls of that session
    // only.
    const call = (session: string, query: string): CallSpec => ({
      sourceId: "lab",
      toolId: "write",
      input: { query },
      sessionId: session,
      threadId: session,
      toolCallId: `${session}-${query}`,
    });
    expect((await b.broker(call("app-grant", "x1"))).outcome).toBe("PERMISSION_DENIED");
    await a.send({ cmd: "decide", call: call("app-grant", "x2"), decision: { decision: "allow_matching" } });
    expect((await b.broker(call("app-grant", "x3"))).outcome).toBe("ran");
    expect((await b.broker(call("other-session", "x4"))).outcome).toBe("PERMISSION_DENIED");
    expect([hitsOf("x1"), hitsOf("x3"), hitsOf("x4")]).toEqual([[], ["B"], []]);
  });

  test("always_allow set on A applies on B", async () => {
    const t = "always";
    expect(
      (await b.broker({ sourceId: "lab", toolId: "write", input: { query: "m0" }, sessionId: t })).outcome,
    ).toBe("PERMISSION_DENIED");
    await a.send({ cmd: "mode", session: t, mode: "always_allow" });
    const seen = await eventually(
      () => b.state(t),
      (s) => s.approvalMode === "always_allow",
    );
    expect(seen.approvalMode).toBe("always_allow");
    const onB = await b.run(t, { user: "go" }, [loadTools(t), writes(t, "1", "m1"), done(t, "2")]);
    expect(onB.interrupts).toEqual([]);
    expect(toolMessage(onB, `${t}-call-m1`)?.status).not.toBe("error");
    expect(hitsOf("m0")).toEqual([]);
    expect(hitsOf("m1")).toEqual(["B"]);
    const after = await a.state(t, t);
    expect(after.authorizations.map((row) => row.decisionSource)).toEqual(["always_allow"]);
  });

  test("a source switched off on A is refused on B and leaves B's tool surface", async () => {
    const t = "off";
    expect((await b.state(t)).surface).toContain("mcp__lab__search");
    await a.send({ cmd: "source", session: t, sourceId: "lab", enabled: false });
    const seen = await eventually(
      () => b.state(t),
      (s) => !s.surface.some((name) => name.startsWith("mcp__lab__")),
    );
    expect(seen.surface.filter((name) => name.startsWith("mcp__lab__"))).toEqual([]);
    const search = (session: string): CallSpec => ({
      sourceId: "lab",
      toolId: "search",
      input: { query: "s1" },
      sessionId: session,
    });
    expect((await b.broker(search(t))).outcome).toBe("SOURCE_DISABLED");
    // B's model is not offered the source's tools; a call it makes anyway is refused by the executor,
    // which finds the tool off the session's surface (the broker, asked directly, said SOURCE_DISABLED).
    const onB = await b.run(t, { user: "go" }, [
      { id: `${t}-ai-1`, calls: [{ name: "mcp__lab__search", args: { query: "s2" }, id: `${t}-call-s2` }] },
      done(t, "2"),
    ]);
    expect(onB.boundTools[0]?.filter((name) => name.startsWith("mcp__lab__"))).toEqual([]);
    expect(toolMessage(onB, `${t}-call-s2`)).toMatchObject({
      status: "error",
      content: expect.stringContaining('"code":"TOOL_UNAVAILABLE"'),
    });
    expect(counter.hits.get("search:s1")).toBeUndefined();
    expect(counter.hits.get("search:s2")).toBeUndefined();
    // Another session is untouched.
    expect((await b.broker(search("elsewhere"))).outcome).toBe("ran");
  });

  test("a thread interrupted on A is resumed on B: the call runs once, recorded with the human's decision", async () => {
    const t = "moved";
    const paused = await a.run(t, { user: "go" }, [loadTools(t), writes(t, "1", "w1")]);
    expect(paused.interrupts).toHaveLength(1);
    const card = paused.interrupts[0]!;
    // The default card: langchain's HITLRequest with Sciencegate's own card under `sciencegate`.
    expect(card.value).toMatchObject({
      actionRequests: [{ args: { query: "w1" } }],
      sciencegate: { type: "permission", toolCallId: `${t}-call-w1`, args: { query: "w1" } },
    });
    expect(hitsOf("w1")).toEqual([]);

    // B reads the card from the checkpoint: the thread's interrupt, the same id.
    const checkpoint = await b.send<{ next: string[]; interrupts: SeenInterrupt[] }>({
      cmd: "threadState",
      thread: t,
    });
    expect(checkpoint.interrupts.map((i) => i.id)).toEqual([card.id]);

    const resumed = await b.run(t, { resume: { [card.id]: { decision: "allow_once" } } }, [done(t, "2")]);
    expect(resumed.interrupts).toEqual([]);
    expect(toolMessage(resumed, `${t}-call-w1`)?.status).not.toBe("error");
    expect(hitsOf("w1")).toEqual(["B"]);

    // Resuming the same card again on A runs nothing again.
    const again = await a.run(t, { resume: { [card.id]: { decision: "allow_once" } } }, [done(t, "3")]);
    expect(again.interrupts).toEqual([]);
    expect(again.modelTurns).toBe(0);
    expect(hitsOf("w1")).toEqual(["B"]);

    const seen = await a.state(t, t);
    const rows = seen.invocations.filter((row) => row.toolCallId === `${t}-call-w1`);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status).toBe("ok");
    const authorization = seen.authorizations.find((row) => row.id === rows[0]?.authorizationId);
    expect(authorization).toMatchObject({ decisionSource: "user_once", toolCallId: `${t}-call-w1` });
  });

  test("the same card resumed on A and B at once: the call runs once, both runs get its result", async () => {
    // Three rounds: which replica consumes the decision, and when the other looks, varies by timing.
    for (const round of [1, 2, 3]) {
      const t = `race-${round}`;
      const paused = await a.run(t, { user: "go" }, [loadTools(t), writes(t, "1", t)]);
      const card = paused.interrupts[0]!;
      const answer = { resume: { [card.id]: { decision: "allow_once" } } };
      const [onA, onB] = await Promise.all([
        a.run(t, answer, [done(t, "2a")]),
        b.run(t, answer, [done(t, "2b")]),
      ]);
      expect(hitsOf(t)).toHaveLength(1);
      // Neither run reports a refusal or a duplicate: the one that found the decision consumed replayed.
      for (const run of [onA, onB]) {
        expect(run.interrupts).toEqual([]);
        expect(toolMessage(run, `${t}-call-${t}`)?.status).not.toBe("error");
      }
      const seen = await a.state(t, t);
      const rows = seen.invocations.filter((row) => row.toolCallId === `${t}-call-${t}`);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.status).toBe("ok");
      const authorization = seen.authorizations.find((row) => row.id === rows[0]?.authorizationId);
      expect(authorization?.decisionSource).toBe("user_once");
    }
  });

  test("parallel cards interrupted on A: one answered on A, the other on B", async () => {
    const t = "split";
    const paused = await a.run(t, { user: "go" }, [loadTools(t), writes(t, "1", "p1", "p2")]);
    expect(paused.interrupts).toHaveLength(2);
    const cardOf = (reply: RunReply, query: string) =>
      reply.interrupts.find(
        (i) =>
          (i.value as { sciencegate?: { args?: { query?: string } } }).sciencegate?.args?.query === query,
      )!;
    const p1 = cardOf(paused, "p1");
    const p2 = cardOf(paused, "p2");

    const half = await a.run(t, { resume: { [p1.id]: { decision: "allow_once" } } }, []);
    expect(half.interrupts.map((i) => i.id)).toEqual([p2.id]);
    expect(hitsOf("p1")).toEqual(["A"]);
    expect(hitsOf("p2")).toEqual([]);

    const rest = await b.run(t, { resume: { [p2.id]: { decision: "deny", message: "not this one" } } }, [
      done(t, "2"),
    ]);
    expect(rest.interrupts).toEqual([]);
    expect(toolMessage(rest, `${t}-call-p1`)?.status).not.toBe("error");
    expect(toolMessage(rest, `${t}-call-p2`)).toMatchObject({
      status: "error",
      content: expect.stringMatching(/"code":"PERMISSION_DENIED".*not this one/),
    });
    expect(hitsOf("p1")).toEqual(["A"]);
    expect(hitsOf("p2")).toEqual([]);
    const seen = await b.state(t, t);
    const sources = (query: string) => {
      const row = seen.invocations.find((r) => r.toolCallId === `${t}-call-${query}`);
      return [row?.status, seen.authorizations.find((x) => x.id === row?.authorizationId)?.decisionSource];
    };
    expect(sources("p1")).toEqual(["ok", "user_once"]);
    expect(sources("p2")).toEqual(["error", "user_deny"]);
  });
});
