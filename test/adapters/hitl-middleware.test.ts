/**
 * Sciencegate next to langchain's own `humanInTheLoopMiddleware` in one `createAgent`, the combination
 * the README documents: `interruptOn` names the app's own tools, Sciencegate asks for the governed ones
 * (only when dangerous). Every dangerous call gets exactly one card (langchain's `HITLRequest` shape
 * from both), resumed with `HITLResponse`s, and every write to the real
 * `@modelcontextprotocol/server-filesystem` happens exactly once.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, type HITLRequest, type HITLResponse, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { governanceMiddleware } from "../../src/adapters/governance-middleware.js";
import { hasCalled, ScriptedChatModel } from "../../src/testing/scripted-chat-model.js";
import { type ExecutorState, interruptsOf, WRITE_FILE } from "./filesystem-executors.js";
import { filesystemRuntimes } from "./filesystem-test-runtime.js";

const openRuntime = filesystemRuntimes();

const ORDERS = ["humanInTheLoopMiddleware first", "governanceMiddleware first"] as const;

describe.each(ORDERS)("createAgent with humanInTheLoopMiddleware and governanceMiddleware (%s)", (order) => {
  test("one card per dangerous call, across both middlewares; each write runs exactly once", async () => {
    const { governance, root } = await openRuntime();
    const notes: string[] = [];
    const saveNote = tool(
      async ({ text }) => {
        notes.push(text);
        return "saved";
      },
      { name: "save_note", description: "Saves a note.", schema: z.object({ text: z.string() }) },
    );
    const model = new ScriptedChatModel((messages) => {
      if (!hasCalled(messages, "tool_search")) {
        return { toolCalls: [{ name: "tool_search", args: { query: `select:${WRITE_FILE}` } }] };
      }
      if (!hasCalled(messages, WRITE_FILE)) {
        return {
          toolCalls: [
            { name: "save_note", args: { text: "writing two files" } },
            ...["a.txt", "b.txt"].map((file) => ({
              name: WRITE_FILE,
              args: { path: join(root, file), content: `content of ${file}` },
            })),
          ],
        };
      }
      return { text: "done" };
    });
    // The app's own tool is langchain's to ask about; governed tools are Sciencegate's. (langchain's
    // option and middleware types collapse to `never` under exactOptionalPropertyTypes, which this
    // repository sets: its zod v3 interop types; without that flag they check as written.)
    const hitl = humanInTheLoopMiddleware({ interruptOn: { save_note: true } } as never);
    const governed = governanceMiddleware({ governance });
    const agent = createAgent({
      model,
      tools: [saveNote],
      middleware: (order === ORDERS[0] ? [hitl, governed] : [governed, hitl]) as unknown as [typeof governed],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "t1" } };
    const asked: string[] = [];
    let state = (await agent.invoke(
      { messages: [{ role: "user", content: "Note it, then write a.txt and b.txt." }] },
      config,
    )) as ExecutorState;
    for (let pause = 0; pause < 5 && interruptsOf(state).length > 0; pause++) {
      const resume: Record<string, HITLResponse> = {};
      for (const { id, value } of interruptsOf(state)) {
        const request: HITLRequest = value as HITLRequest;
        for (const action of request.actionRequests)
          asked.push(`${action.name} ${JSON.stringify(action.args)}`);
        resume[id ?? ""] = { decisions: request.actionRequests.map(() => ({ type: "approve" as const })) };
      }
      state = (await agent.invoke(new Command({ resume }), config)) as ExecutorState;
    }

    // Three dangerous calls, three cards: none asked twice, the safe tool_search never.
    expect(asked.sort()).toEqual(
      [
        'save_note {"text":"writing two files"}',
        `${WRITE_FILE} ${JSON.stringify({ path: join(root, "a.txt"), content: "content of a.txt" })}`,
        `${WRITE_FILE} ${JSON.stringify({ path: join(root, "b.txt"), content: "content of b.txt" })}`,
      ].sort(),
    );
    expect(state.messages.at(-1)?.text).toBe("done");
    expect(notes).toEqual(["writing two files"]);
    for (const file of ["a.txt", "b.txt"]) {
      expect(await readFile(join(root, file), "utf8")).toBe(`content of ${file}`);
    }
    const rows = (await governance.ledger.query()).filter((row) => row.toolId === "write_file");
    expect(rows.map((row) => row.status)).toEqual(["ok", "ok"]);
  });
});
