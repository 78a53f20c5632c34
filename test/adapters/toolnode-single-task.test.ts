import { access } from "node:fs/promises";
import { join } from "node:path";
import type { AIMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { expect, test } from "vitest";
import { prepareFixedToolTable } from "../../src/adapters/fixed-tool-table.js";
import { cardsOf, filesystemGovernance, writerModel } from "./filesystem-executors.js";

test("a prebuilt ToolNode routed by toolsCondition (all calls in one task) shows the cards one at a time; each write runs once", async () => {
  const { governance, root } = await filesystemGovernance();
  try {
    const table = prepareFixedToolTable({ governance });
    const model = writerModel(root, ["a.txt", "b.txt", "c.txt"]).bindTools(table);
    const app = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [(await model.invoke(state.messages)) as AIMessage] }))
      .addNode("tools", new ToolNode(table))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "one-task" } };
    let state = await app.invoke({ messages: [{ role: "user", content: "write" }] }, config);
    const seen: string[] = [];
    for (let pause = 0; pause < 5 && cardsOf(state).length > 0; pause++) {
      const cards = cardsOf(state);
      expect(cards).toHaveLength(1);
      seen.push(String(cards[0]?.value?.args?.path).split("/").at(-1) ?? "");
      state = await app.invoke(
        new Command({ resume: { [cards[0]?.id ?? ""]: { decision: "allow_once" } } }),
        config,
      );
    }
    expect(seen).toEqual(["a.txt", "b.txt", "c.txt"]);
    const rows = (await governance.ledger.query()).filter((row) => row.toolId === "write_file");
    expect(rows.map((row) => `${row.toolCallId} ${row.status}`).sort()).toEqual([
      "write-1 ok",
      "write-2 ok",
      "write-3 ok",
    ]);
    for (const file of ["a.txt", "b.txt", "c.txt"])
      await expect(access(join(root, file))).resolves.toBeUndefined();
  } finally {
    await governance.close();
  }
}, 60_000);
