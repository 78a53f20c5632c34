/**
 * A ready-made governed agent: the model node and the governed tool node in a `StateGraph`
 * (model → one tool task per call → model, until the model answers without tool calls).
 */

import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import type {
  ApprovalCardFormat,
  ApprovalHook,
  PrincipalResolver,
  SessionIdResolver,
} from "../nodes/index.js";
import {
  createGovernedToolNode,
  createModelNode,
  GOVERNED_TOOLS_NODE,
  GovernedStateAnnotation,
  governedToolsCondition,
} from "../nodes/index.js";
import type { DeferredToolsSectionOptions, PromotionScope } from "../visibility/index.js";
import { type ArtifactBuiltinsRuntime, createArtifactBuiltins } from "./artifact-builtins.js";

/**
 * What `createGovernedAgent` uses of a governance runtime: the broker and the session's tools, and,
 * when present, the parts behind the approval cards and the artifact tools. A `createGovernance`
 * runtime has all of it.
 */
export type GovernedAgentRuntime = ArtifactBuiltinsRuntime;

/** Options of `createGovernedAgent`. */
export interface GovernedAgentOptions {
  /** A chat model that supports `bindTools`. */
  model: BaseChatModel;
  /** The governance runtime (`createGovernance`). */
  governance: GovernedAgentRuntime;
  /** The app's own tools: always visible, not deferred, not run through the broker. @default [] */
  tools?: readonly StructuredToolInterface[];
  /** The app's instructions, first in the system message. */
  systemPrompt?: string;
  /** Needed for interrupts (approvals) and multi-turn threads. @default none */
  checkpointer?: BaseCheckpointSaver;
  /**
   * Asked before each MCP call that would execute; may `interrupt()`. `false` asks nothing.
   * @default `createApprovalGate({ governance })` when `governance` is a `createGovernance` runtime that
   *   enforces permissions (a dangerous call then pauses the thread with an approval card), else none
   */
  approvalHook?: ApprovalHook | false;
  /**
   * The shape of the default approval cards (MCP calls and downloads): `hitl` (langchain's
   * `HITLRequest`, the native card under `sciencegate`: what Agent Chat UI and LangGraph Studio
   * render) or `native` (`PermissionCard`); both accept either answer shape. @default "hitl"
   */
  cardFormat?: ApprovalCardFormat;
  /** `run`: each user turn starts with nothing promoted; `thread`: promotions last. @default "run" */
  promotionScope?: PromotionScope;
  /**
   * The token budget of the `<available-deferred-tools>` section (and an optional token counter):
   * summaries while they fit, else names, else one line per source. @default `{ tokenBudget: 2500 }`
   */
  deferredTools?: DeferredToolsSectionOptions;
  /**
   * The governance session of a call, read from each call's config: one agent serves many threads,
   * each its own session. Return a shared key (a user id your server sets, say) for threads that
   * should share grants, approval modes and source switches.
   * @default `configurable.thread_id`, else `"default"` (see `SessionIdResolver`)
   */
  sessionId?: SessionIdResolver;
  /**
   * Who a call is made for, read from each call's config (the authenticated user your server sets;
   * see `PrincipalResolver`): rows carry it, and only its grants, approval mode and quotas apply.
   * @default none: every call is the single user's
   */
  principal?: PrincipalResolver;
  /**
   * Adds the built-in (not deferred) `artifact_download` and `paper_extract_pdf` tools when the
   * governance runtime has `downloads`. When the runtime enforces permissions, a dangerous download
   * pauses the thread with its own approval card (like an MCP call). `true` adds them whatever the
   * sources. @default when one of the runtime's sources can offer a download (an `artifact-plan` tool)
   */
  artifactTools?: boolean;
}

/**
 * Builds and compiles the governed agent graph (nodes `agent` and `tools`, state
 * `GovernedStateAnnotation`).
 * @param options model, governance, the app's tools, prompt, checkpointer, approval hook, scope
 * @returns the compiled graph; invoke it with `{messages}` and a `configurable.thread_id`
 * @throws GovernanceError `INVALID_CONFIG` when the model cannot bind tools
 * @example
 * const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
 * const { messages } = await agent.invoke({ messages: [new HumanMessage("BRAF V600E papers")] }, { configurable: { thread_id: "t1" } });
 */
export function createGovernedAgent(options: GovernedAgentOptions) {
  const tools = [...(options.tools ?? []), ...createArtifactBuiltins(options.governance, options)];
  return new StateGraph(GovernedStateAnnotation)
    .addNode("agent", createModelNode({ ...options, tools }))
    .addNode(GOVERNED_TOOLS_NODE, createGovernedToolNode({ ...options, tools }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", governedToolsCondition, [GOVERNED_TOOLS_NODE, END])
    .addEdge(GOVERNED_TOOLS_NODE, "agent")
    .compile(options.checkpointer ? { checkpointer: options.checkpointer } : {});
}
