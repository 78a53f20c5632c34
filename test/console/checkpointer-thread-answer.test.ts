/**
 * `checkpointerThreadAnswer` over real checkpointers (`MemorySaver`, `SqliteSaver` on a file) written by
 * real graph runs: the answer is the last AI message of the thread's latest checkpoint.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, test } from "vitest";
import { checkpointerThreadAnswer } from "../../src/console/index.js";

const dir = mkdtempSync(join(tmpdir(), "sciencegate-thread-answer-"));
const sqlite = SqliteSaver.fromConnString(join(dir, "checkpoints.sqlite"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A graph whose one node answers with the message the input's text names. */
function answeringGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", (state) => {
      const asked = String(state.messages.at(-1)?.content ?? "");
      if (asked === "tools only") {
        return {
          messages: [new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "search", args: {} }] })],
        };
      }
      if (asked === "blocks") {
        return {
          messages: [
            new AIMessage({
              content: [
                { type: "text", text: "First part [PMID:1]." },
                { type: "text", text: " Second part [PMID:2]." },
              ],
            }),
          ],
        };
      }
      return { messages: [new AIMessage(`Answer to ${asked} [PMID:22663011].`)] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer });
}

describe.each([
  ["MemorySaver", () => new MemorySaver()],
  ["SqliteSaver", () => sqlite],
])("checkpointerThreadAnswer over %s", (_name, makeSaver) => {
  const saver = makeSaver();
  const graph = answeringGraph(saver);
  const answer = checkpointerThreadAnswer(saver);
  const run = (thread: string, text: string) =>
    graph.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread } });

  test("the last AI message of the latest checkpoint", async () => {
    await run("t-1", "the first question");
    expect(await answer("t-1")).toBe("Answer to the first question [PMID:22663011].");
    await run("t-1", "the second question");
    expect(await answer("t-1")).toBe("Answer to the second question [PMID:22663011].");
  });

  test("text blocks are joined; a message that only calls tools is no answer", async () => {
    await run("t-blocks", "blocks");
    expect(await answer("t-blocks")).toBe("First part [PMID:1]. Second part [PMID:2].");
    await run("t-tools", "tools only");
    expect(await answer("t-tools")).toBeUndefined();
  });

  test("a thread without checkpoints has no answer", async () => {
    expect(await answer("never-ran")).toBeUndefined();
  });
});

test("another channel name", async () => {
  const saver = new MemorySaver();
  const State = Annotation.Root({ ...MessagesAnnotation.spec, log: MessagesAnnotation.spec.messages });
  const graph = new StateGraph(State)
    .addNode("agent", () => ({
      log: [new AIMessage("Kept in log.")],
      messages: [new AIMessage("In messages.")],
    }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: saver });
  await graph.invoke({ messages: [] }, { configurable: { thread_id: "t-log" } });
  expect(await checkpointerThreadAnswer(saver, { channel: "log" })("t-log")).toBe("Kept in log.");
  expect(await checkpointerThreadAnswer(saver)("t-log")).toBe("In messages.");
});
