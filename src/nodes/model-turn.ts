/**
 * One model turn of a governed agent, prepared the same way for the model node and for the
 * `createAgent` middleware: the session's tools, the promotion write at the start of a run (a reset
 * unless promotions last the thread, then keyword auto-promotion), the deferred tools to bind and the
 * system-prompt sections (`<available-deferred-tools>`, routing hints, the notice of changed tools).
 *
 * A run is one user turn with its interrupts and resumes. Its id is the id of the user message that
 * started it, which the messages reducer makes stable and unique, so a resume (same last user message)
 * keeps its promotions and a new user turn starts afresh.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import {
  autoPromote,
  type DeferredToolsSectionOptions,
  deferredToolsPromptSection,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  promote,
  promotionReducer,
  routingHintsSection,
  runStartUpdate,
  type SurfaceTool,
  staleTools,
  staleToolsNotice,
  visibleTools,
} from "../visibility/index.js";

/** Run id of a conversation that has no user message yet (e.g. only a system message). */
export const NO_USER_RUN_ID = "no-user-message";

/** How a turn is prepared: the executor's promotion and prompt options. */
export interface ModelTurnOptions {
  /** `run`: a new user turn starts with nothing promoted; `thread`: promotions last. @default "run" */
  promotionScope?: PromotionScope | undefined;
  /** How many `prefer` tools the user's words promote before the first model call. @default 3 */
  autoPromoteLimit?: number | undefined;
  /** The `<available-deferred-tools>` budget, already resolved by the executor (it validates it once). */
  deferredTools?: DeferredToolsSectionOptions | undefined;
}

/** A prepared turn. */
export interface ModelTurn {
  /** The id of the run the turn belongs to. */
  runId: string;
  /** The promotion write that starts the run; `undefined` on a later turn or a resume of the run. */
  start: PromotionUpdate | undefined;
  /** The promotions of this turn (the state with `start` applied). */
  promotion: PromotionState | undefined;
  /** The deferred tools the model may call this turn: promoted at their current definition. */
  deferred: SurfaceTool[];
  /** The governed sections of the system prompt, joined (`""` when there is nothing to say). */
  sections: string;
}

/** What a turn reads of the graph state. */
export interface TurnState {
  messages: readonly BaseMessage[];
  promotion?: PromotionState | undefined;
}

/**
 * The run of a turn and the promotion write that starts it (all that an executor writing the start
 * before the model call, as the middleware's `beforeModel`, needs).
 * @param tools the session's tools
 * @param state the conversation and the checkpointed promotions
 * @param options promotion scope and auto-promotion limit
 * @returns the run id, and the start write (`undefined` on a later turn or a resume of the run)
 */
export function runStart(
  tools: readonly SurfaceTool[],
  state: TurnState,
  options: ModelTurnOptions = {},
): { runId: string; start: PromotionUpdate | undefined } {
  const run = currentRun(state.messages);
  const reset = runStartUpdate(state.promotion, run.runId, options.promotionScope);
  const auto = reset && promote(autoPromote(run.text, tools, options.autoPromoteLimit ?? 3), tools);
  return { runId: run.runId, start: reset && { ...reset, ...auto } };
}

/**
 * Prepares a turn.
 * @param tools the session's tools
 * @param state the conversation and the checkpointed promotions
 * @param options promotion scope, auto-promotion limit and the section's budget
 * @returns the run, the start write, the tools to bind and the prompt sections
 */
export function prepareModelTurn(
  tools: readonly SurfaceTool[],
  state: TurnState,
  options: ModelTurnOptions = {},
): ModelTurn {
  const { runId, start } = runStart(tools, state, options);
  const promotion = start === undefined ? state.promotion : promotionReducer(state.promotion, start);
  const sections = [
    deferredToolsPromptSection(tools, promotion, options.deferredTools),
    routingHintsSection(tools, promotion),
    staleToolsNotice(staleTools(promotion, tools)),
  ].filter((section) => section.trim() !== "");
  return {
    runId,
    start,
    promotion,
    deferred: visibleTools(tools, promotion).filter((tool) => tool.deferred),
    sections: sections.join("\n\n"),
  };
}

/**
 * The run a conversation is in: the latest user message. A message without an id (one the messages
 * reducer has not seen) is named by its position, so two such user turns are still two runs.
 * @param messages the conversation
 * @returns the run's id and the user's words
 */
export function currentRun(messages: readonly BaseMessage[]): { runId: string; text: string } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message && HumanMessage.isInstance(message))
      return { runId: message.id ?? `human#${i}`, text: message.text };
  }
  return { runId: NO_USER_RUN_ID, text: "" };
}
