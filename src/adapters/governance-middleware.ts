/**
 * Sciencegate as a middleware of langchain's `createAgent`. The agent keeps its own
 * tools; the middleware adds `tool_search` and the promoted deferred tools to each model request,
 * the `<available-deferred-tools>` section to the system prompt, and runs every governed call and
 * `tool_search` through `executeGovernedToolCall` (so through the broker), writing promotions to a
 * reducer channel of the agent's state.
 *
 * langchain is an optional peer, so it is imported neither at run time (`createMiddleware` only
 * brands a plain object with `Symbol.for("AgentMiddleware")`) nor in the types: the middleware's
 * shape is described with `@langchain/core` and `@langchain/langgraph` types, and langchain's
 * `createAgent` accepts it as an `AgentMiddleware` (the middleware tests type-check that).
 */

import type { AIMessage, BaseMessage, SystemMessage, ToolCall, ToolMessage } from "@langchain/core/messages";
import type { ClientTool, ServerTool } from "@langchain/core/tools";
import { Command, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { requireGovernanceOption } from "../core/index.js";
import {
  type ApprovalCardFormat,
  type ApprovalHook,
  createGovernedRunner,
  type GovernedRuntime,
  type GovernedToolRunner,
  governedTools,
  type PrincipalResolver,
  PromotionStateSchema,
  prepareModelTurn,
  runStart,
  type SessionIdResolver,
} from "../nodes/index.js";
import {
  type DeferredToolsSectionOptions,
  type PromotionScope,
  type PromotionState,
  type PromotionUpdate,
  resolveDeferredToolsSectionOptions,
  TOOL_SEARCH_NAME,
} from "../visibility/index.js";

/** What the middleware reads of an agent run (langchain's `Runtime` has it). */
export interface AgentRuntimeLike {
  /** The run's `configurable`: its `thread_id` is the thread (see `sessionIdOf`). */
  configurable?: Record<string, unknown> | undefined;
  /** The agent's context (`createAgent({contextSchema})`), for an app's session resolver. */
  readonly context?: unknown;
  signal?: AbortSignal | undefined;
}

/** The agent state the hooks read: langchain's built-in `messages` and the promotion channel. */
export interface GovernedAgentState {
  messages: BaseMessage[];
  promotion?: PromotionState | undefined;
}

/** What `wrapModelCall` reads and rewrites of a model request (langchain's `ModelRequest`). */
export interface AgentModelRequestLike {
  systemMessage: SystemMessage;
  tools: (ClientTool | ServerTool)[];
  state: GovernedAgentState;
  runtime: AgentRuntimeLike;
}

/** What `wrapToolCall` reads of a tool call request (langchain's `ToolCallRequest`). */
export interface AgentToolCallRequestLike {
  toolCall: ToolCall;
  /** The agent's own tool of that name, if it has one. */
  tool: ClientTool | ServerTool | undefined;
  state: GovernedAgentState;
  runtime: AgentRuntimeLike;
}

type PromiseOrValue<T> = T | Promise<T>;

/**
 * The state update of `beforeModel`: the promotion channel, never the messages. (Naming `messages`
 * also makes it a valid update of langchain's built-in agent state, which has no `promotion`.)
 */
export interface PromotionWrite {
  promotion: PromotionUpdate;
  messages?: never;
}

/**
 * The middleware `governanceMiddleware` returns: a langchain `AgentMiddleware` (name, state schema
 * and three hooks). The hooks are generic over the request so that the handler receives langchain's
 * full request type back, with only the system message and the tools replaced.
 */
export interface GovernanceMiddleware {
  name: string;
  /** The promotion channel, added to the agent's state under `promotion`. */
  stateSchema: typeof PromotionStateSchema;
  /** At the first model call of a run: resets the promotions (scope `run`) and auto-promotes. */
  beforeModel: (state: GovernedAgentState, runtime: AgentRuntimeLike) => PromotionWrite | undefined;
  /** Adds `tool_search`, the promoted tools and the prompt sections to the model request. */
  wrapModelCall: <R extends AgentModelRequestLike>(
    request: R,
    handler: (request: R) => PromiseOrValue<AIMessage>,
  ) => PromiseOrValue<AIMessage>;
  /** Runs governed calls and `tool_search` through the broker; the app's tools go to `handler`. */
  wrapToolCall: <R extends AgentToolCallRequestLike>(
    request: R,
    handler: (request: R) => PromiseOrValue<ToolMessage | Command>,
  ) => Promise<ToolMessage | Command>;
}

/** Options of `governanceMiddleware`. */
export interface GovernanceMiddlewareOptions {
  /** The runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`). */
  governance: GovernedRuntime;
  /**
   * The session of a call, read from each call's run (its `configurable` and `context`); a blank or
   * `undefined` answer defers to the thread. @default the run's `thread_id`, else `"default"` (see
   * `SessionIdResolver`)
   */
  sessionId?: SessionIdResolver | undefined;
  /**
   * Who a call is made for, read from each call's config (the authenticated user your server sets;
   * see `PrincipalResolver`): rows carry it, and only its grants, approval mode and quotas apply.
   * @default none: every call is the single user's
   */
  principal?: PrincipalResolver | undefined;
  /**
   * How long promotions last: `run` (a new user message starts from nothing; interrupts and resumes
   * keep them) or `thread` (they accumulate over the thread).
   * @default "run"
   */
  promotionScope?: PromotionScope | undefined;
  /** How many `prefer` tools the user's words promote before the first model call. @default 3 */
  autoPromoteLimit?: number | undefined;
  /**
   * The token budget of the `<available-deferred-tools>` section (and an optional token counter):
   * summaries while they fit, else names, else one line per source. @default `{ tokenBudget: 2500 }`
   */
  deferredTools?: DeferredToolsSectionOptions | undefined;
  /**
   * Asked before each governed MCP call that would execute, in that call's own task; may
   * `interrupt()`. `false` asks nothing (the broker then refuses a dangerous call that no grant or
   * approval mode covers). Give `createAgent` a checkpointer so the run can pause.
   * @default `createApprovalGate({ governance, cardFormat })` when `governance` is a `createGovernance`
   *   runtime that enforces permissions: a dangerous call pauses the run with one approval card per call
   */
  approvalHook?: ApprovalHook | false | undefined;
  /**
   * The shape of the default gate's cards. `hitl`: each card is langchain's `HITLRequest` of one call
   * (what Agent Chat UI and LangGraph Studio render), with Sciencegate's `PermissionCard` under
   * `sciencegate`, answered with an `HITLResponse` (`approve`, optionally with `scope: "matching"` or
   * `"always"`; `edit`; `reject` with a message). `native`: the `PermissionCard` itself. Both shapes
   * accept both answers. @default "hitl"
   */
  cardFormat?: ApprovalCardFormat | undefined;
}

/**
 * Creates the middleware. Calls of the app's own tools pass through untouched; calls of governed
 * tools (`mcp__…` names of the session's surface) and of `tool_search` never reach the agent's tool
 * handler. A deferred tool the model calls before `tool_search` promoted it gets a retryable
 * `TOOL_UNAVAILABLE` "search first" message and nothing runs.
 * @param options `governance` (the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)), session mapping, promotion scope and auto-promotion limit
 * @returns a middleware for `createAgent({ middleware: [...] })`
 * @throws GovernanceError `INVALID_CONFIG` when `deferredTools.tokenBudget` is not a positive number
 * @example
 * const agent = createAgent({ model, tools: [myTool], middleware: [governanceMiddleware({ governance })], checkpointer });
 * await agent.invoke({ messages: [{ role: "user", content: "Find PubMed papers on BRCA1" }] }, { configurable: { thread_id: "t1" } });
 */
export function governanceMiddleware(options: GovernanceMiddlewareOptions): GovernanceMiddleware {
  requireGovernanceOption(options, "governanceMiddleware");
  const { governance } = options;
  const runner = createGovernedRunner(governance, options);
  const deferredTools = resolveDeferredToolsSectionOptions(options.deferredTools);
  const turnOptions = { ...options, deferredTools };

  const middleware: GovernanceMiddleware = {
    name: "SciencegateGovernance",
    stateSchema: PromotionStateSchema,

    beforeModel: (state, runtime) => {
      const tools = governance.tools(runner.sessionOf(configOf(runtime)));
      const { start } = runStart(tools, state, turnOptions);
      return start && { promotion: start };
    },

    wrapModelCall: (request, handler) => {
      const config = configOf(request.runtime);
      const sessionId = runner.sessionOf(config);
      const tools = governance.tools(sessionId);
      // beforeModel wrote the run's start, so the turn is the state as it is.
      const turn = prepareModelTurn(tools, request.state, turnOptions);
      const governed = new Set(tools.map((tool) => tool.name));
      const appTools = request.tools.filter((tool) => !isGovernedName(toolName(tool), governed));
      const run: GovernedToolRunner = async (call, callConfig) =>
        (await runner.run(call, callConfig ?? config, turn, sessionId)).message;
      const systemMessage =
        turn.sections === ""
          ? request.systemMessage
          : request.systemMessage.concat(`${hasText(request.systemMessage) ? "\n\n" : ""}${turn.sections}`);
      return handler({
        ...request,
        systemMessage,
        tools: [...appTools, ...governedTools(turn.deferred, run)],
      });
    },

    wrapToolCall: async (request, handler) => {
      const config = configOf(request.runtime);
      const sessionId = runner.sessionOf(config);
      const name = request.toolCall.name;
      const governed = new Set(governance.tools(sessionId).map((tool) => tool.name));
      // The app's own tool (registered with the agent) wins over a same-named governed one.
      if (request.tool !== undefined || !isGovernedName(name, governed)) return handler(request);
      const { promotion } = request.state;
      const outcome = await runner.run(
        { id: request.toolCall.id, name, args: request.toolCall.args },
        config,
        { promotion, runId: promotion?.runId },
        sessionId,
      );
      if (!outcome.promotion || Object.keys(outcome.promotion.promote ?? {}).length === 0)
        return outcome.message;
      return new Command({ update: { promotion: outcome.promotion, messages: [outcome.message] } });
    },
  };
  // What `createMiddleware` adds; a global symbol, so no runtime import of langchain is needed.
  return Object.assign(middleware, { [Symbol.for("AgentMiddleware")]: true });
}

/** The config of a call made in an agent run: what the session resolver and the approval hook read. */
function configOf(runtime: AgentRuntimeLike): LangGraphRunnableConfig {
  const { context } = runtime;
  const isRecord = typeof context === "object" && context !== null;
  return {
    configurable: runtime.configurable ?? {},
    ...(runtime.signal === undefined ? {} : { signal: runtime.signal }),
    ...(isRecord ? { context: context as Record<string, unknown> } : {}),
  };
}

function isGovernedName(name: string, governed: ReadonlySet<string>): boolean {
  // `mcp__` names outside the session (disabled source, misspelling) get the governed "unknown tool" answer.
  return name === TOOL_SEARCH_NAME || governed.has(name) || name.startsWith("mcp__");
}

function toolName(tool: ClientTool | ServerTool): string {
  const name: unknown = tool.name;
  return typeof name === "string" ? name : "";
}

function hasText(message: BaseMessage): boolean {
  return message.text.trim() !== "";
}
