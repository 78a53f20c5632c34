/**
 * The model node of a governed agent: each turn it binds `tool_search`, the app's own tools and the
 * deferred tools promoted at their current definition, and tells the model in the system message
 * which deferred tools exist, which words route to them and which loaded tools changed
 * (`prepareModelTurn`, shared with the `createAgent` middleware).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { GovernanceError } from "../core/index.js";
import {
  type DeferredToolsSectionOptions,
  type PromotionScope,
  resolveDeferredToolsSectionOptions,
} from "../visibility/index.js";
import type { GovernedRuntime } from "./execute-tool-call.js";
import { createGovernedRunner, type PrincipalResolver, type SessionIdResolver } from "./governed-runner.js";
import type { GovernedState, GovernedStateUpdate } from "./governed-state.js";
import { type GovernedToolRunner, governedTools } from "./governed-tool.js";
import { prepareModelTurn } from "./model-turn.js";

/** Options of `createModelNode`. */
export interface ModelNodeOptions {
  /** A chat model that supports `bindTools`. */
  model: BaseChatModel;
  /** The governance runtime (`createGovernance`). */
  governance: GovernedRuntime;
  /** The app's own tools: always bound, never deferred, not run through the broker. @default [] */
  tools?: readonly StructuredToolInterface[];
  /** The app's instructions, first in the system message. */
  systemPrompt?: string;
  /**
   * The governance session of a call, read from each run's config; must match the tool node's.
   * @default `configurable.thread_id`, else `"default"` (see `SessionIdResolver`)
   */
  sessionId?: SessionIdResolver;
  /**
   * Who a call is made for, read from each call's config (the authenticated user your server sets;
   * see `PrincipalResolver`): rows carry it, and only its grants, approval mode and quotas apply.
   * @default none: every call is the single user's
   */
  principal?: PrincipalResolver;
  /** `run`: a new user turn starts with nothing promoted; `thread`: promotions last. @default "run" */
  promotionScope?: PromotionScope;
  /**
   * The token budget of the `<available-deferred-tools>` section (and an optional token counter):
   * summaries while they fit, else names, else one line per source. @default `{ tokenBudget: 2500 }`
   */
  deferredTools?: DeferredToolsSectionOptions;
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
  const tools = options.tools ?? [];
  const deferredTools = resolveDeferredToolsSectionOptions(options.deferredTools);
  // The bound tools run governed too when a runner invokes them (the tool node calls the broker itself).
  const runner = createGovernedRunner(governance, {
    sessionId: options.sessionId,
    principal: options.principal,
    tools,
  });
  return async (state, config) => {
    const sessionId = runner.sessionOf(config);
    const turn = prepareModelTurn(governance.tools(sessionId), state, {
      promotionScope: options.promotionScope,
      deferredTools,
    });
    const run: GovernedToolRunner = async (call, callConfig) =>
      (await runner.run(call, callConfig ?? config, turn, sessionId)).message;
    const [search, ...deferred] = governedTools(turn.deferred, run);
    const bound = model.bindTools!([search, ...tools, ...deferred]);
    const system = [options.systemPrompt ?? "", turn.sections]
      .filter((text) => text.trim() !== "")
      .join("\n\n");
    const response = await bound.invoke(withSystemPrompt(state.messages, system), config);
    return { messages: [response], runId: turn.runId, ...(turn.start && { promotion: turn.start }) };
  };
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
