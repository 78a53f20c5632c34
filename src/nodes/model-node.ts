/**
 * The model node of a governed agent: each turn it binds `tool_search`, the app's own tools and the
 * deferred tools promoted at their current definition, and tells the model in the system message
 * which deferred tools exist, which words route to them and which loaded tools changed.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError, sessionIdOf } from "../core/index.js";
import type { SurfaceTool } from "../visibility/index.js";
import {
  autoPromote,
  createToolSearchTool,
  type DeferredToolsSectionOptions,
  deferredToolsPromptSection,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  promote,
  promotionReducer,
  resolveDeferredToolsSectionOptions,
  routingHintsSection,
  runStartUpdate,
  staleTools,
  staleToolsNotice,
  visibleToolSchemas,
} from "../visibility/index.js";
import type { GovernedRuntime, SessionIdResolver } from "./execute-tool-call.js";
import type { GovernedState, GovernedStateUpdate } from "./governed-state.js";

/** Options of `createModelNode`. */
export interface ModelNodeOptions {
  /** A chat model that supports `bindTools`. */
  model: BaseChatModel;
  /** The governance runtime (`createGovernance`). */
  governance: GovernedRuntime;
  /** The app's own tools: always bound, never deferred, not run through the broker. @default [] */
  builtinTools?: readonly StructuredToolInterface[];
  /** The app's instructions, first in the system message. */
  systemPrompt?: string;
  /** The governance session of a call. @default `configurable.thread_id`, else `"default"` (see `sessionIdOf`) */
  sessionId?: SessionIdResolver;
  /** `run`: a new user turn starts with nothing promoted; `thread`: promotions last. @default "run" */
  promotionScope?: PromotionScope;
  /**
   * The token budget of the `<available-deferred-tools>` section (and an optional token counter):
   * summaries while they fit, else names, else one line per source. @default `{ tokenBudget: 2500 }`
   */
  deferredTools?: DeferredToolsSectionOptions;
}

/** A tool definition in the OpenAI function format, which every LangChain chat model binds. */
export interface FunctionToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Creates the model node.
 * @param options model, governance, the app's tools, system prompt, session resolver, promotion scope
 * @returns a LangGraph node `(state, config) => {messages, runId, promotion?}`
 * @throws GovernanceError `INVALID_CONFIG` when the model cannot bind tools, or `deferredTools.tokenBudget`
 *   is not a positive number
 * @example
 * graph.addNode("agent", createModelNode({ model, governance, systemPrompt: "You are a research assistant." }))
 */
export function createModelNode(
  options: ModelNodeOptions,
): (state: GovernedState, config: LangGraphRunnableConfig) => Promise<GovernedStateUpdate> {
  const { model, governance } = options;
  if (typeof model.bindTools !== "function") {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "createModelNode: the chat model has no bindTools(); pass a chat model that supports tool calling.",
    );
  }
  const builtinTools = options.builtinTools ?? [];
  const deferredTools = resolveDeferredToolsSectionOptions(options.deferredTools);
  return async (state, config) => {
    const tools = governance.tools(sessionIdOf(config, options.sessionId));
    const start = runStartPromotion(state.promotion, state.messages, tools, options.promotionScope);
    const promotion = start === undefined ? state.promotion : promotionReducer(state.promotion, start);
    const bound = model.bindTools!([
      createToolSearchTool({ getTools: () => tools }),
      ...builtinTools,
      ...deferredToolDefinitions(tools, promotion),
    ]);
    const system = governedSystemPrompt(options.systemPrompt, tools, promotion, deferredTools);
    const response = await bound.invoke(withSystemPrompt(state.messages, system), config);
    return {
      messages: [response],
      runId: currentRunId(state.messages),
      ...(start === undefined ? {} : { promotion: start }),
    };
  };
}

/**
 * The deferred tools the model may call this turn, as function definitions with their JSON schemas.
 * @param tools the session's tools
 * @param promotion the run's promotion state
 * @returns one definition per promoted, non-stale deferred tool
 */
export function deferredToolDefinitions(
  tools: readonly SurfaceTool[],
  promotion: GovernedState["promotion"] | undefined,
): FunctionToolDefinition[] {
  const deferred = new Set(tools.filter((tool) => tool.deferred).map((tool) => tool.name));
  return visibleToolSchemas(tools, promotion)
    .filter((schema) => deferred.has(schema.name))
    .map((schema) => ({
      type: "function",
      function: { name: schema.name, description: schema.description, parameters: schema.inputSchema },
    }));
}

/**
 * The system message of a turn: the app's prompt, `<available-deferred-tools>`, routing hints and
 * the notice of changed tools, each only when it has something to say.
 * @param systemPrompt the app's instructions
 * @param tools the session's tools
 * @param promotion the run's promotion state
 * @param deferredTools the section's token budget and counter
 * @returns the text (`""` when there is nothing to say)
 */
export function governedSystemPrompt(
  systemPrompt: string | undefined,
  tools: readonly SurfaceTool[],
  promotion: GovernedState["promotion"] | undefined,
  deferredTools: DeferredToolsSectionOptions = {},
): string {
  return [
    systemPrompt ?? "",
    deferredToolsPromptSection(tools, promotion, deferredTools),
    routingHintsSection(tools, promotion),
    staleToolsNotice(staleTools(promotion, tools)),
  ]
    .filter((section) => section.trim() !== "")
    .join("\n\n");
}

/** Providers accept one system message, first: an app's own system message is merged with ours. */
function withSystemPrompt(messages: readonly BaseMessage[], system: string): BaseMessage[] {
  const [first, ...rest] = messages;
  if (first && SystemMessage.isInstance(first)) {
    const merged = [first.text, system].filter((text) => text.trim() !== "").join("\n\n");
    return [new SystemMessage({ content: merged, ...(first.id ? { id: first.id } : {}) }), ...rest];
  }
  return system === "" ? [...messages] : [new SystemMessage(system), ...messages];
}

/**
 * Where a run begins: a run is one user turn with its interrupts and resumes. Its id
 * is the id of the user message that started it, which the messages reducer makes stable and unique,
 * so a resume (same last user message) keeps its promotions and a new user turn starts afresh.
 */

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
