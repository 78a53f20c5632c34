/**
 * `checkpointerThreadAnswer(checkpointer)`: a thread's final answer read from a LangGraph checkpointer,
 * for the console's Evidence page (`ConsoleHandlerOptions.threadAnswer`).
 */
import { AIMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";

/** Options of `checkpointerThreadAnswer`. */
export interface CheckpointerThreadAnswerOptions {
  /** The state channel holding the conversation. @default "messages" */
  channel?: string;
  /** The checkpoint namespace (a subgraph's); the root graph's is empty. @default "" */
  checkpointNamespace?: string;
}

/**
 * Reads the text of the last AI message in a thread's latest checkpoint: the answer the agent gave
 * last. `undefined` when the thread has no checkpoint, no AI message, or an AI message without text
 * (one that only calls tools).
 * @param checkpointer the app's checkpointer (`MemorySaver`, `SqliteSaver`, `PostgresSaver`, …)
 * @param options the messages channel and the checkpoint namespace
 * @returns the function the console calls with a thread id
 * @example
 * const checkpointer = SqliteSaver.fromConnString("checkpoints.sqlite");
 * await serveConsole({ governance, threadAnswer: checkpointerThreadAnswer(checkpointer) });
 */
export function checkpointerThreadAnswer(
  checkpointer: BaseCheckpointSaver,
  options: CheckpointerThreadAnswerOptions = {},
): (threadId: string) => Promise<string | undefined> {
  const channel = options.channel ?? "messages";
  return async (threadId) => {
    const tuple = await checkpointer.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: options.checkpointNamespace ?? "" },
    });
    const messages = tuple?.checkpoint.channel_values[channel];
    if (!Array.isArray(messages)) return undefined;
    const last = messages.findLast((message: unknown) => AIMessage.isInstance(message));
    const text = last === undefined ? "" : (last as AIMessage).text.trim();
    return text === "" ? undefined : text;
  };
}
