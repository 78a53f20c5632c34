/**
 * How every executor runs the governed calls of its runs: the session a call belongs to is read from
 * that call's own config by one rule (`sessionIdOf`: the app's resolver, else the thread, else
 * `"default"`), never fixed when the executor is built, so one agent, middleware or tool table serves
 * many threads and a grant, approval mode or source switch of one session never reaches another. The
 * runner adds the thread, the abort signal, the approval hook and the app's own tools, and hands the
 * call to `executeGovernedToolCall`.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { principalOf, sessionIdOf, threadIdOf } from "../core/index.js";
import type { PromotionState } from "../visibility/index.js";
import { type ApprovalHookOption, resolveApprovalHook } from "./default-approval.js";
import {
  executeGovernedToolCall,
  type GovernedRuntime,
  type ToolCallLike,
  type ToolCallOutcome,
} from "./execute-tool-call.js";
import type { ApprovalCardFormat } from "./hitl-protocol.js";

/**
 * Picks the governance session of a call from its config (`configurable`, and the run's `context`);
 * a blank or `undefined` answer defers to the thread. Give the same resolver to every part of one
 * executor. An app whose threads should share grants and modes (all threads of one user, say)
 * returns that key, e.g. `(config) => config.configurable?.user_id`; read it from what your server
 * sets, never from a value any client may send, or a client can join another's session (on the
 * LangGraph API server, `configurable.langgraph_auth_user_id` is the authenticated user only when an
 * auth handler is configured).
 */
export type SessionIdResolver = (config: LangGraphRunnableConfig) => string | undefined;

/**
 * Reads who a call is made for from its config: the authenticated user the app's server put there.
 * Only what the server sets may be read, never a value a client may send: on the LangGraph API server,
 * `configurable.langgraph_auth_user_id` is trustworthy only when the deployment has an auth handler
 * (`auth.path` in `langgraph.json`); without one a client can send any value. A blank or `undefined`
 * answer is no principal; anything else must pass `checkPrincipal`.
 * @example
 * const principal: PrincipalResolver = (config) => config.configurable?.langgraph_auth_user_id;
 */
export type PrincipalResolver = (config: LangGraphRunnableConfig) => string | undefined;

/** Options of {@link createGovernedRunner}: what one executor shares across its calls. */
export interface GovernedRunnerOptions {
  /** The session of a call. @default `configurable.thread_id`, else `"default"` (see `sessionIdOf`) */
  sessionId?: SessionIdResolver | undefined;
  /**
   * Who a call is made for: its rows carry it, and only its grants, approval mode and quotas apply
   * (see {@link PrincipalResolver}). @default none: every call is the single user's
   */
  principal?: PrincipalResolver | undefined;
  /** The approval hook, `false` for none. @default the approval gate when the runtime enforces permissions */
  approvalHook?: ApprovalHookOption;
  /** The shape of the default gate's cards. @default "hitl" */
  cardFormat?: ApprovalCardFormat | undefined;
  /** The app's own tools: run as they are, not through the broker. @default [] */
  tools?: readonly StructuredToolInterface[] | undefined;
}

/** What a call reads of its run's graph state: the promotions, and the run they belong to. */
export interface RunPromotion {
  promotion?: PromotionState | undefined;
  runId?: string | undefined;
}

/** Runs governed calls for one executor (see {@link createGovernedRunner}). */
export interface GovernedCallRunner {
  /**
   * The session of a call.
   * @param config the call's config (absent outside a graph)
   * @returns the resolver's answer, else the thread, else `"default"`
   */
  sessionOf(config: LangGraphRunnableConfig | undefined): string;
  /**
   * Runs one call in the session its config names.
   * @param call the tool call
   * @param config the call's config: thread, session, signal, and the config the approval hook gets
   * @param state the run's promotions
   * @param sessionId the call's session when the caller already resolved it @default `sessionOf(config)`
   * @returns the message for the model and, for `tool_search`, the promotion to apply
   */
  run(
    call: ToolCallLike,
    config: LangGraphRunnableConfig | undefined,
    state: RunPromotion,
    sessionId?: string,
  ): Promise<ToolCallOutcome>;
}

/**
 * Creates an executor's runner: its approval hook is resolved once (so sibling calls of one resume
 * share one gate, which `allow_matching` needs), its session per call.
 * @param governance the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)
 * @param options session resolver, approval hook and card format, the app's tools
 * @returns the runner
 * @example
 * const runner = createGovernedRunner(governance, { sessionId: (config) => config.configurable?.user_id });
 * const { message } = await runner.run(call, config, { promotion: state.promotion });
 */
export function createGovernedRunner(
  governance: GovernedRuntime,
  options: GovernedRunnerOptions = {},
): GovernedCallRunner {
  const hook = resolveApprovalHook(governance, options.approvalHook, options.cardFormat);
  const builtinTools = options.tools ?? [];
  const sessionOf = (config: LangGraphRunnableConfig | undefined) =>
    sessionIdOf(config ?? {}, options.sessionId);
  return {
    sessionOf,
    run: (call, config, state, sessionId) =>
      executeGovernedToolCall(governance, call, {
        sessionId: sessionId ?? sessionOf(config),
        principal: principalOf(config ?? {}, options.principal),
        threadId: threadIdOf(config),
        runId: state.runId,
        promotion: state.promotion,
        builtinTools,
        signal: config?.signal,
        approval: hook && { hook, config: config ?? {} },
        config,
        cardFormat: options.cardFormat,
      }),
  };
}
