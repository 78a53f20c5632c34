/**
 * The graph state of a governed agent: the conversation, the promotion channel (a reducer, so
 * parallel `tool_search` writes merge and promotions survive checkpoints and interrupts) and the id
 * of the run the promotions belong to. The promotion channel is defined once, as a zod-described
 * `ReducedValue`: `createAgent` middleware takes it as a `StateSchema`, the node set's
 * `GovernedStateAnnotation` takes the channel made from it.
 */
import {
  Annotation,
  type BaseChannel,
  MessagesAnnotation,
  ReducedValue,
  StateSchema,
} from "@langchain/langgraph";
import { z } from "zod";
import {
  emptyPromotionState,
  type PromotionState,
  type PromotionUpdate,
  promotionReducer,
} from "../visibility/index.js";

const promotedSchema = z.record(z.string(), z.string());
const stateSchema = z.object({ promoted: promotedSchema, runId: z.string().optional() });
const updateSchema = z.object({
  promote: promotedSchema.optional(),
  reset: z.boolean().optional(),
  runId: z.string().optional(),
});

/**
 * A write to the channel: an update, or a whole state, which replaces the current one. langchain
 * parses the agent's state with a field's input schema before hooks see it (and the agent's input,
 * where callers pass no promotion), so the channel must accept a whole state unchanged as well as an
 * update, and nothing at all.
 */
type PromotionWrite = PromotionUpdate | PromotionState | undefined;

function reducePromotion(current: PromotionState | undefined, next: PromotionWrite): PromotionState {
  if (next !== undefined && "promoted" in next) {
    return promotionReducer(current, { reset: true, promote: next.promoted, runId: next.runId });
  }
  return promotionReducer(current, next);
}

/** The promotion channel: deferred tools the model has loaded (model-visible name -> definition hash). */
const promotionValue = new ReducedValue(stateSchema.default(emptyPromotionState), {
  inputSchema: z.union([stateSchema, updateSchema]).optional(),
  reducer: reducePromotion,
});

/**
 * The promotion channel as a LangGraph `StateSchema` under `promotion`, for executors that take
 * zod-described state (langchain's `createAgent` middleware).
 */
export const PromotionStateSchema = new StateSchema({ promotion: promotionValue });

/**
 * The state of `createGovernedAgent`, and what `createModelNode` / `createGovernedToolNode` read.
 * Spread its `spec` into an app's own state to add governance to an existing graph.
 * @example
 * const AppState = Annotation.Root({ ...GovernedStateAnnotation.spec, notes: Annotation<string[]>() });
 */
export const GovernedStateAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Deferred tools the model has loaded (model-visible name -> definition hash). */
  promotion: PromotionStateSchema.getChannels().promotion as BaseChannel<
    PromotionState,
    PromotionWrite,
    unknown
  >,
  /** The current run: the id of the user message that started it. */
  runId: Annotation<string | undefined>(),
});

/** The values of `GovernedStateAnnotation`. */
export type GovernedState = typeof GovernedStateAnnotation.State;

/** A write to `GovernedStateAnnotation`. */
export type GovernedStateUpdate = typeof GovernedStateAnnotation.Update;
