/**
 * Sciencegate as a middleware of langchain's `createAgent` (DESIGN.md §6). The agent keeps its own
 * tools; the middleware adds `tool_search` and the promoted deferred tools to each model request,
 * the `<available-deferred-tools>` section to the system prompt, and runs every governed call and
 * `tool_search` through `executeGovernedToolCall` (so through the broker), writing promotions to a
 * reducer channel of the agent's state.
 *
 * langchain is not imported at run time (types only): `createMiddleware` only brands a plain object
 * with `Symbol.for("AgentMiddleware")`, and importing `sciencegate` must not require langchain.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { Command, ReducedValue, StateSchema } from "@langchain/langgraph";
import type { AgentMiddleware, Runtime, ToolCallRequest } from "langchain";
import { z } from "zod";
import { sessionIdOf, threadIdOf } from "../core/index.js";
import { executeGovernedToolCall, type GovernedRuntime } from "../nodes/index.js";
import {
  autoPromote,
  deferredToolsPromptSection,
  emptyPromotionState,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  promote,
  promotionReducer,
  routingHintsSection,
  runStartUpdate,
  staleTools,
  staleToolsNotice,
  TOOL_SEARCH_NAME,
  visibleTools,
} from "../visibility/index.js";
import { toGovernedStructuredTool } from "./governed-structured-tool.js";
import { createGovernedToolSearch } from "./governed-tool-search.js";

/** Options of `governanceMiddleware`. */
export interface GovernanceMiddlewareOptions {
  /**
   * The session of a run (whose enabled sources make up the surface); a blank or `undefined` answer
   * defers to the thread. @default the run's `thread_id`, else `"default"` (see `sessionIdOf`)
   */
  sessionId?: (runtime: Runtime<unknown>) => string;
  /**
   * How long promotions last: `run` (a new user message starts from nothing; interrupts and resumes
   * keep them) or `thread` (they accumulate over the thread).
   * @default "run"
   */
  promotionScope?: PromotionScope;
  /** How many `prefer` tools the user's words promote before the first model call. @default 3 */
  autoPromoteLimit?: number;
}

interface GovernedAgentState {
  messages: BaseMessage[];
  promotion?: PromotionState;
}

/**
 * Creates the middleware. Calls of the app's own tools pass through untouched; calls of governed
 * tools (`mcp__…` names of the session's surface) and of `tool_search` never reach the agent's tool
 * handler. A deferred tool the model calls before `tool_search` promoted it gets a retryable
 * `TOOL_UNAVAILABLE` "search first" message and nothing runs.
 * @param governance the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)
 * @param options session mapping, promotion scope and auto-promotion limit
 * @returns a middleware for `createAgent({ middleware: [...] })`
 * @example
 * const agent = createAgent({ model, tools: [myTool], middleware: [governanceMiddleware(governance)], checkpointer });
 * await agent.invoke({ messages: [{ role: "user", content: "Find PubMed papers on BRCA1" }] }, { configurable: { thread_id: "t1" } });
 */
export function governanceMiddleware(
  governance: GovernedRuntime,
  options: GovernanceMiddlewareOptions = {},
): AgentMiddleware<ReturnType<typeof createPromotionStateSchema>> {
  const sessionOf = (runtime: Runtime<unknown>): string => sessionIdOf(runtime, options.sessionId);
  const scope = options.promotionScope ?? "run";

  const middleware: AgentMiddleware<ReturnType<typeof createPromotionStateSchema>> = {
    name: "SciencegateGovernance",
    stateSchema: createPromotionStateSchema(),

    beforeModel: (state, runtime) => {
      const { promotion, messages } = state as GovernedAgentState;
      const turn = lastUserTurn(messages);
      const start = runStartUpdate(promotion, turn.runId, scope);
      if (start === undefined) return undefined;
      const tools = governance.tools(sessionOf(runtime));
      const names = autoPromote(turn.text, tools, options.autoPromoteLimit ?? 3);
      const update: PromotionUpdate = { ...start, ...promote(names, tools) };
      return { promotion: update } as never;
    },

    wrapModelCall: (request, handler) => {
      const sessionId = sessionOf(request.runtime);
      const tools = governance.tools(sessionId);
      const promotion = (request.state as GovernedAgentState).promotion;
      const governed = new Set(tools.map((tool) => tool.name));
      const appTools = request.tools.filter((tool) => !isGovernedName(toolName(tool), governed));
      const execute = bindExecutor(governance, sessionId, request.runtime, promotion);
      const promoted = visibleTools(tools, promotion)
        .filter((tool) => tool.deferred)
        .map((tool) => toGovernedStructuredTool(tool, execute));
      const sections = [
        deferredToolsPromptSection(tools, promotion),
        routingHintsSection(tools, promotion),
        staleToolsNotice(staleTools(promotion, tools)),
      ].filter((section) => section !== "");
      const systemMessage =
        sections.length === 0
          ? request.systemMessage
          : request.systemMessage.concat(
              `${hasText(request.systemMessage) ? "\n\n" : ""}${sections.join("\n\n")}`,
            );
      return handler({
        ...request,
        systemMessage,
        tools: [...appTools, createGovernedToolSearch(governance, sessionId, execute), ...promoted],
      });
    },

    wrapToolCall: async (request, handler) => {
      const sessionId = sessionOf(request.runtime);
      const name = request.toolCall.name;
      const governed = new Set(governance.tools(sessionId).map((tool) => tool.name));
      // The app's own tool (registered with the agent) wins over a same-named governed one.
      if (request.tool !== undefined || !isGovernedName(name, governed)) return handler(request);
      const promotion = (request.state as GovernedAgentState).promotion;
      const outcome = await executeGovernedToolCall(
        governance,
        { id: request.toolCall.id, name, args: request.toolCall.args },
        runContext(sessionId, request.runtime, promotion),
      );
      if (!outcome.promotion || Object.keys(outcome.promotion.promote ?? {}).length === 0)
        return outcome.message;
      return new Command({ update: { promotion: outcome.promotion, messages: [outcome.message] } });
    },
  };
  // What `createMiddleware` adds; a global symbol, so no runtime import of langchain is needed.
  return Object.assign(middleware, { [Symbol.for("AgentMiddleware")]: true });
}

type AnyRequest = ToolCallRequest<Record<string, unknown>, unknown>;

function bindExecutor(
  governance: GovernedRuntime,
  sessionId: string,
  runtime: AnyRequest["runtime"],
  promotion: PromotionState | undefined,
) {
  return async (call: Parameters<typeof executeGovernedToolCall>[1]) =>
    (await executeGovernedToolCall(governance, call, runContext(sessionId, runtime, promotion))).message;
}

function runContext(
  sessionId: string,
  runtime: AnyRequest["runtime"],
  promotion: PromotionState | undefined,
) {
  return {
    sessionId,
    promotion,
    threadId: threadIdOf(runtime),
    runId: promotion?.runId,
    signal: runtime.signal,
  };
}

function isGovernedName(name: string, governed: ReadonlySet<string>): boolean {
  // `mcp__` names outside the session (disabled source, misspelling) get the governed "unknown tool" answer.
  return name === TOOL_SEARCH_NAME || governed.has(name) || name.startsWith("mcp__");
}

function toolName(tool: unknown): string {
  const name = (tool as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : "";
}

function hasText(message: BaseMessage): boolean {
  return message.text.trim() !== "";
}

/**
 * The run a model call belongs to: the latest user message. A resume adds no user message, so it
 * stays in the run it resumes; a new user turn gets a new id (the messages reducer gives every
 * message one).
 */
function lastUserTurn(messages: readonly BaseMessage[]): { runId: string; text: string } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.getType() === "human") return { runId: message.id ?? `human#${i}`, text: message.text };
  }
  return { runId: "no-user-message", text: "" };
}

/**
 * The promotion channel as a LangGraph `StateSchema` field, for executors that take zod-described
 * state (langchain's `createAgent` middleware). The reducer is the one of `src/visibility`, so two
 * `tool_search` calls of one turn both land and a new run starts from nothing.
 */

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

type StoredState = z.infer<typeof stateSchema>;
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
      // zod reads optional fields as `T | undefined`; the reducer never stores an undefined key.
      reducer: (current, next) =>
        reducePromotion(current as PromotionState, next as PromotionInput) as StoredState,
    }),
  });
}

function reducePromotion(current: PromotionState | undefined, next: PromotionInput): PromotionState {
  if (next !== undefined && "promoted" in next) {
    const replace: PromotionUpdate = { reset: true, promote: next.promoted };
    return promotionReducer(current, next.runId === undefined ? replace : { ...replace, runId: next.runId });
  }
  return promotionReducer(current, next);
}
