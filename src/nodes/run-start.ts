/**
 * Where a run begins (DESIGN.md §6): a run is one user turn with its interrupts and resumes. Its id
 * is the id of the user message that started it, which the messages reducer makes stable and unique,
 * so a resume (same last user message) keeps its promotions and a new user turn starts afresh.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { SurfaceTool } from "../visibility/index.js";
import {
  autoPromote,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  promote,
  runStartUpdate,
} from "../visibility/index.js";

/** Run id of a conversation that has no user message yet (e.g. only a system message). */
export const NO_USER_RUN_ID = "no-user-message";

/** How many tools keyword auto-promotion loads before the first model call. */
export const AUTO_PROMOTE_LIMIT = 3;

/**
 * The last user message of a conversation.
 * @param messages the conversation
 * @returns the last `HumanMessage`, or `undefined`
 */
export function lastUserMessage(messages: readonly BaseMessage[]): BaseMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message && HumanMessage.isInstance(message)) return message;
  }
  return undefined;
}

/**
 * The id of the current run.
 * @param messages the conversation (ids assigned by the messages reducer)
 * @returns the id of the last user message, or `"no-user-message"`
 */
export function currentRunId(messages: readonly BaseMessage[]): string {
  return lastUserMessage(messages)?.id ?? NO_USER_RUN_ID;
}

/**
 * The promotion write at the first model call of a run: a reset (unless the scope is the thread),
 * then the `prefer` tools whose keywords occur in the user's words, top 3.
 * @param state the checkpointed promotion state
 * @param messages the conversation
 * @param tools the session's tools
 * @param scope `run` (default) or `thread`
 * @returns the update, or `undefined` when the run already started (a later turn or a resume)
 */
export function runStartPromotion(
  state: PromotionState | undefined,
  messages: readonly BaseMessage[],
  tools: readonly SurfaceTool[],
  scope: PromotionScope = "run",
): PromotionUpdate | undefined {
  const runId = currentRunId(messages);
  const start = runStartUpdate(state, runId, scope);
  if (start === undefined) return undefined;
  const userText = lastUserMessage(messages)?.text ?? "";
  const auto = promote(autoPromote(userText, tools, AUTO_PROMOTE_LIMIT), tools).promote ?? {};
  return Object.keys(auto).length > 0 ? { ...start, promote: auto } : start;
}
