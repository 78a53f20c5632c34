/**
 * Runs a governed agent thread to its end: streams LangGraph's `updates` (each new message once) and
 * `custom` (download progress) modes, and whenever the thread pauses, answers EVERY approval card of
 * the pause in one resume map `{[interruptId]: decision}`, then streams on.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { createGovernedAgent, GovernedStateAnnotation, PermissionDecision } from "sciencegate";
import type { ArtifactDownloadProgressEvent } from "sciencegate/artifacts";
import { type CardInterrupt, isCardInterrupt } from "./approval-prompt.js";

/** The state of a governed agent thread. */
type GovernedState = typeof GovernedStateAnnotation.State;

/** The compiled graph `createGovernedAgent` returns. */
export type GovernedAgent = ReturnType<typeof createGovernedAgent>;

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  agent: GovernedAgent;
  /** The first input, e.g. `{messages: [new HumanMessage(question)]}`. */
  input: Parameters<GovernedAgent["invoke"]>[0];
  /** The thread (and so the governance session). */
  threadId: string;
  /** Called once per new message, in stream order. */
  onMessage: (message: BaseMessage) => void | Promise<void>;
  /** Called for each `artifact_download` progress event. */
  onProgress: (event: ArtifactDownloadProgressEvent) => void;
  /** Decides every card of one pause. */
  answer: (cards: ReadonlyArray<CardInterrupt>) => Promise<Record<string, PermissionDecision>>;
}

/**
 * Streams the thread until the model answers without tool calls.
 * @param options agent, input, thread and the three callbacks
 * @returns the final state
 * @throws Error when the thread pauses on an interrupt that is not an approval card
 */
export async function runAgent(options: RunAgentOptions): Promise<GovernedState> {
  const config = { configurable: { thread_id: options.threadId } };
  const seen = new Set<string>();
  let input: Parameters<GovernedAgent["invoke"]>[0] = options.input;
  for (;;) {
    const stream = await options.agent.stream(input, { ...config, streamMode: ["updates", "custom"] });
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === "custom") {
        if (isProgressEvent(chunk)) options.onProgress(chunk);
        continue;
      }
      for (const [node, update] of Object.entries(chunk as Record<string, unknown>)) {
        if (node === "__interrupt__") continue; // read from the checkpoint below, once per pause
        for (const message of messagesOf(update)) {
          // A task that finished before a pause is replayed on resume; print its messages once.
          const key = messageKey(message);
          if (seen.has(key)) continue;
          seen.add(key);
          await options.onMessage(message);
        }
      }
    }
    const snapshot = await options.agent.getState(config);
    const interrupts = snapshot.tasks.flatMap((task) => task.interrupts ?? []);
    if (interrupts.length === 0) return snapshot.values as GovernedState;
    const cards = interrupts.filter(isCardInterrupt);
    if (cards.length < interrupts.length) {
      throw new Error(
        `The thread paused on ${interrupts.length - cards.length} interrupt(s) that are not approval cards.`,
      );
    }
    input = new Command({ resume: await options.answer(cards) });
  }
}

function isProgressEvent(chunk: unknown): chunk is ArtifactDownloadProgressEvent {
  return (chunk as { type?: unknown } | null)?.type === "artifact_download_progress";
}

function messagesOf(update: unknown): BaseMessage[] {
  const messages = (update as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}

function messageKey(message: BaseMessage): string {
  const toolCallId = (message as { tool_call_id?: string }).tool_call_id;
  return toolCallId ? `tool:${toolCallId}` : `${message.type}:${message.id ?? message.text}`;
}
