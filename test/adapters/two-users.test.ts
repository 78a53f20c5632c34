/**
 * Two users, two threads, one executor: each executor is built once (one table, one agent, one
 * middleware) and serves Alice's thread and Bob's thread over a real `@modelcontextprotocol/server-
 * filesystem`. What Alice allows (a matching grant, the always-allow mode) or switches off stays in her
 * session: Bob's writes still raise their own cards, and nothing of his is written until he answers.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import type { Governance } from "../../src/runtime/create-governance.js";
import { hasCalled, ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import {
  buildExecutor,
  cardsOf,
  EXECUTOR_NAMES,
  type Executor,
  type ExecutorOptions,
  WRITE_FILE,
} from "./filesystem-executors.js";
import { exists, filesystemRuntimes } from "./filesystem-test-runtime.js";

const openRuntime = filesystemRuntimes();

/** Each user's thread writes `<user>-1.txt` and `<user>-2.txt` in the same directory. */
function twoUserModel(root: string): ScriptedChatModel {
  return new ScriptedChatModel((messages) => {
    const user = /user:(\w+)/.exec(messages.map((m) => m.text).join("\n"))?.[1] ?? "nobody";
    if (!hasCalled(messages, "tool_search")) {
      return { toolCalls: [{ name: "tool_search", args: { query: `select:${WRITE_FILE}` } }] };
    }
    if (!hasCalled(messages, WRITE_FILE)) {
      return {
        toolCalls: [1, 2].map((n) => ({
          name: WRITE_FILE,
          args: { path: join(root, `${user}-${n}.txt`), content: `${user} ${n}` },
        })),
      };
    }
    return { text: "done" };
  });
}

async function setup(name: (typeof EXECUTOR_NAMES)[number], options?: ExecutorOptions) {
  const { governance, root } = await openRuntime();
  const agent = buildExecutor(name, governance, twoUserModel(root), undefined, options);
  const start = (user: string, configurable?: Record<string, unknown>) =>
    agent.invoke({ say: `user:${user}` }, `${user}-thread`, configurable);
  const files = async (user: string) =>
    (await Promise.all([1, 2].map((n) => exists(join(root, `${user}-${n}.txt`))))).filter(Boolean).length;
  return { governance, root, agent, start, files };
}

/** The write rows of one thread: status and the authorization that let it run (or refused it). */
async function writeRows(governance: Governance, threadId: string) {
  const authorizations = new Map(
    (await governance.ledger.listAuthorizations()).map((a) => [a.id, a.decisionSource]),
  );
  return (await governance.ledger.query({ threadId }))
    .filter((row) => row.toolId === "write_file")
    .map((row) => `${row.status} ${row.authorizationId ? authorizations.get(row.authorizationId) : "-"}`)
    .sort();
}

async function answerAll(agent: Executor, state: unknown, threadId: string, decision: string) {
  const resume = Object.fromEntries(cardsOf(state).map((card) => [card.id, { decision }]));
  return agent.invoke(new Command({ resume }), threadId);
}

describe.each(EXECUTOR_NAMES)("two users on one %s", (name) => {
  test("Alice's allow_matching never releases Bob's writes: Bob gets his own cards, his files wait for him", async () => {
    const { governance, agent, start, files } = await setup(name);
    const alice = await start("alice");
    expect(cardsOf(alice)).toHaveLength(2);
    const [first] = cardsOf(alice);
    await agent.invoke(
      new Command({ resume: { [first?.id ?? ""]: { decision: "allow_matching" } } }),
      "alice-thread",
    );
    expect(await files("alice")).toBe(2);

    const bob = await start("bob");
    expect(cardsOf(bob)).toHaveLength(2);
    expect(await files("bob")).toBe(0);
    await answerAll(agent, bob, "bob-thread", "deny");
    expect(await files("bob")).toBe(0);
    expect(await writeRows(governance, "alice-thread")).toEqual(["ok existing_grant", "ok user_grant"]);
    expect(await writeRows(governance, "bob-thread")).toEqual(["error user_deny", "error user_deny"]);
  });

  test("Alice's allow_always switches only her session: Bob is still asked", async () => {
    const { governance, agent, start, files, root } = await setup(name);
    const alice = await start("alice");
    await answerAll(agent, alice, "alice-thread", "allow_always");
    expect(await readFile(join(root, "alice-1.txt"), "utf8")).toBe("alice 1");

    const bob = await start("bob");
    expect(cardsOf(bob)).toHaveLength(2);
    expect(await files("bob")).toBe(0);
    await answerAll(agent, bob, "bob-thread", "allow_once");
    expect(await files("bob")).toBe(2);
    expect(await writeRows(governance, "bob-thread")).toEqual(["ok user_once", "ok user_once"]);
  });

  test("an app resolver that names the user makes that user's threads share one session, and only theirs", async () => {
    // The user id comes from the app's own config (on a server, from its auth), never from the model.
    const byUser = {
      sessionId: (config: { configurable?: Record<string, unknown> }) =>
        String(config.configurable?.user_id ?? ""),
    };
    const { governance, agent, start, files } = await setup(name, byUser);
    const first = await start("alice", { user_id: "alice" });
    expect(cardsOf(first)).toHaveLength(2);
    await agent.invoke(
      new Command({ resume: { [cardsOf(first)[0]?.id ?? ""]: { decision: "allow_matching" } } }),
      "alice-thread",
      { user_id: "alice" },
    );
    expect(await files("alice")).toBe(2);

    // Alice's second thread: her grant covers it, no card.
    const second = await start("alicetoo", { user_id: "alice" });
    expect(cardsOf(second)).toEqual([]);
    expect(await files("alicetoo")).toBe(2);
    expect(await writeRows(governance, "alicetoo-thread")).toEqual([
      "ok existing_grant",
      "ok existing_grant",
    ]);
    const sessions = new Set(
      (await governance.ledger.query({ toolId: "write_file" })).map((row) => row.sessionId),
    );
    expect([...sessions]).toEqual(["alice"]);

    // Bob, in another session of the same resolver, is asked.
    const bob = await start("bob", { user_id: "bob" });
    expect(cardsOf(bob)).toHaveLength(2);
    expect(await files("bob")).toBe(0);
  });
});
