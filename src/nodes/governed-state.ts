/**
 * The graph state of a governed agent: the conversation, the promotion channel (a reducer, so
 * parallel `tool_search` writes merge and promotions survive checkpoints and interrupts) and the id
 * of the run the promotions belong to.
 */
import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import {
  emptyPromotionState,
  type PromotionState,
  type PromotionUpdate,
  promotionReducer,
} from "../visibility/index.js";

/**
 * The state of `createGovernedAgent`, and what `createModelNode` / `createGovernedToolNode` read.
 * Spread its `spec` into an app's own state to add governance to an existing graph.
 * @example
 * const AppState = Annotation.Root({ ...GovernedStateAnnotation.spec, notes: Annotation<string[]>() });
 */
export const GovernedStateAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** Deferred tools the model has loaded (model-visible name -> definition hash). */
  promotion: Annotation<PromotionState, PromotionUpdate>({
    reducer: promotionReducer,
    default: emptyPromotionState,
  }),
  /** The current run: the id of the user message that started it. */
  runId: Annotation<string | undefined>(),
});

/** The values of `GovernedStateAnnotation`. */
export type GovernedState = typeof GovernedStateAnnotation.State;

/** A write to `GovernedStateAnnotation`. */
export type GovernedStateUpdate = typeof GovernedStateAnnotation.Update;
