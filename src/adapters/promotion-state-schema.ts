/**
 * The promotion channel as a LangGraph `StateSchema` field, for executors that take zod-described
 * state (langchain's `createAgent` middleware). The reducer is the one of `src/visibility`, so two
 * `tool_search` calls of one turn both land and a new run starts from nothing.
 */
import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import {
  emptyPromotionState,
  type PromotionState,
  type PromotionUpdate,
  promotionReducer,
} from "../visibility/index.js";

/** The state key of the promotion channel. */
export const PROMOTION_STATE_KEY = "promotion";

const promotedSchema = z.record(z.string(), z.string());
const stateSchema = z.object({ promoted: promotedSchema, runId: z.string().optional() });
const updateSchema = z.object({
  promote: promotedSchema.optional(),
  reset: z.boolean().optional(),
  runId: z.string().optional(),
});

/**
 * langchain parses the agent's state with a field's input schema before hooks see it (and the
 * agent's input, where callers pass no promotion): so it must accept a whole state unchanged as
 * well as an update, and nothing at all.
 */
const inputSchema = z.union([stateSchema, updateSchema]).optional();

type PromotionInput = PromotionUpdate | PromotionState | undefined;

/**
 * The state schema holding the promotion channel under `promotion`.
 * @returns a `StateSchema` with one reduced field (value `PromotionState`, updates `PromotionUpdate`
 *   or a whole `PromotionState`, which replaces the current one)
 */
export function createPromotionStateSchema() {
  return new StateSchema({
    [PROMOTION_STATE_KEY]: new ReducedValue(stateSchema.default(emptyPromotionState), {
      inputSchema,
      reducer: reducePromotion,
    }),
  });
}

function reducePromotion(current: PromotionState | undefined, next: PromotionInput): PromotionState {
  if (next !== undefined && "promoted" in next) {
    const replace: PromotionUpdate = { reset: true, promote: next.promoted };
    return promotionReducer(current, { ...replace, runId: next.runId });
  }
  return promotionReducer(current, next);
}

/** The `StateSchema` that {@link createPromotionStateSchema} returns. */
export type PromotionStateSchema = ReturnType<typeof createPromotionStateSchema>;
