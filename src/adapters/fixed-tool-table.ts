/**
 * Tool tables for executors that freeze their tools when they are built: a swarm agent,
 * `createReactAgent`, a prebuilt `ToolNode`, or anything that binds its tools once. Such an executor
 * cannot bind a tool that `tool_search` promotes mid-run, so every deferred tool is promoted up front;
 * `tool_search` stays, because it is how the model reads a schema again after a definition changed.
 * The table is frozen, but the session is not: each call reads its own from its config, so one table
 * serves every thread (and every user) of an app.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { LRUCache } from "lru-cache";
import { DEFAULT_SESSION_ID, GovernanceError } from "../core/index.js";
import {
  type ApprovalCardFormat,
  type ApprovalHookOption,
  createGovernedRunner,
  type GovernedToolRunner,
  governedTools,
  type PrincipalResolver,
  type SessionIdResolver,
} from "../nodes/index.js";
import { type PromotionState, promote, promotionReducer } from "../visibility/index.js";
import { type ArtifactBuiltinsRuntime, createArtifactBuiltins } from "./artifact-builtins.js";

/** Sessions whose `tool_search` re-promotions a table remembers; a forgotten one starts over. */
const REMEMBERED_SESSIONS = 10_000;

/** Options of `prepareFixedToolTable`. */
export interface FixedToolTableOptions {
  /** The runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`). */
  governance: ArtifactBuiltinsRuntime;
  /**
   * The session of a call, read from each call's config (so one table serves many threads, each its
   * own session). Return a shared key (a user id from your server's config, say) for threads that
   * should share grants, approval modes and source switches.
   * @default `configurable.thread_id`, else `"default"` (see `SessionIdResolver`)
   */
  sessionId?: SessionIdResolver | undefined;
  /**
   * Who a call is made for, read from each call's config (the authenticated user your server sets;
   * see `PrincipalResolver`): rows carry it, and only its grants, approval mode and quotas apply.
   * @default none: every call is the single user's
   */
  principal?: PrincipalResolver | undefined;
  /**
   * Asked before each MCP call that would execute, inside the tool's graph task; may `interrupt()`.
   * `false` asks nothing (the broker then refuses a dangerous call that no grant or approval mode
   * covers). @default `createApprovalGate({ governance })` when `governance` is a `createGovernance`
   * runtime that enforces permissions: a dangerous call pauses the run with an approval card
   */
  approvalHook?: ApprovalHookOption;
  /**
   * The shape of the default approval cards (MCP calls and downloads): `hitl` (langchain's
   * `HITLRequest`, the native card under `sciencegate`) or `native` (`PermissionCard`); both accept
   * either answer shape. @default "hitl"
   */
  cardFormat?: ApprovalCardFormat | undefined;
  /**
   * Adds `artifact_download` (with its own approval card) and `paper_extract_pdf` when the runtime
   * has `downloads`. @default when one of the runtime's sources can offer a download (an
   *   `artifact-plan` tool)
   */
  artifactTools?: boolean | undefined;
}

/**
 * The tools of a fixed-table executor: `tool_search` first, then every deferred (MCP) tool a session
 * starts with (each source's `enabledByDefault`, as the `"default"` session sees them when the table is
 * built) with its model-visible name, composed description and input schema, then `artifact_download`
 * and `paper_extract_pdf` when the runtime has governed downloads. Each call runs through the broker
 * (validation, permission, cache, rate limits, ledger keyed by `thread_id:toolCallId`) in the session
 * its own config names, so what one session allowed (a grant, `always_allow`) or switched off never
 * reaches another, and a source switched off for a session is refused for that session only.
 * Everything is promoted at the definitions it had when the table was built: if a tool's definition
 * changes later, a call gets the retryable "search first" error until `tool_search` shows the model
 * the new schema, which promotes it again for that session. A dangerous call asks a human through the
 * approval gate (one card per call) when the tool runs inside a graph with a checkpointer; give the
 * executor one task per tool call (`createReactAgent({version: "v2"})`, or a `ToolNode` reached
 * through `Send`) so parallel calls get independent cards.
 * @param options `governance` (the runtime (`createGovernance`, or anything with a broker and `tools(sessionId)`)), session resolver, approval hook, card format, artifact built-ins and their data directory
 * @returns the tools, ready for `createReactAgent({tools: [...table, ...appTools]})`
 * @throws GovernanceError `INVALID_CONFIG` when the second argument is a session id (the table is no
 *   longer built for one session); `DUPLICATE_ID` when two catalog tools share a model-visible name
 * @example
 * const tools = prepareFixedToolTable({ governance }); // one table, every thread its own session
 * const agent = createReactAgent({ llm, tools: [...tools, createHandoffTool({ agentName: "writer" })], name: "researcher" });
 */
export function prepareFixedToolTable(options: FixedToolTableOptions): StructuredToolInterface[] {
  // Plain JavaScript callers of the old signatures (the runtime, then a session id) are told the new one.
  if (typeof options !== "object" || options === null || options.governance === undefined) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "prepareFixedToolTable takes one options object, { governance, sessionId?, … }, and a table is no " +
        "longer built for one session, since every thread would then share its grants and approval modes. " +
        "Call prepareFixedToolTable({ governance }): each call's session is its thread; pass " +
        "{ governance, sessionId: (config) => … } for threads that share one.",
    );
  }
  const { governance } = options;
  const runner = createGovernedRunner(governance, options);
  const tools = governance.tools(DEFAULT_SESSION_ID).filter((tool) => tool.deferred);
  const initial: PromotionState = promotionReducer(
    undefined,
    promote(
      tools.map((tool) => tool.name),
      tools,
    ),
  );
  // Each session's own re-promotions (tool_search after a definition changed), from the table's start.
  const promotions = new LRUCache<string, PromotionState>({ max: REMEMBERED_SESSIONS });
  const run: GovernedToolRunner = async (call, config) => {
    const sessionId = runner.sessionOf(config);
    const promotion = promotions.get(sessionId) ?? initial;
    const outcome = await runner.run(call, config, { promotion }, sessionId);
    if (outcome.promotion) {
      // Read again: a sibling call of the same session may have promoted while this one ran.
      const current = promotions.get(sessionId) ?? initial;
      promotions.set(sessionId, promotionReducer(current, outcome.promotion));
    }
    return outcome.message;
  };
  return [
    ...governedTools(tools, run),
    ...createArtifactBuiltins(governance, {
      artifactTools: options.artifactTools,
      sessionId: options.sessionId,
      cardFormat: options.cardFormat,
      principal: options.principal,
    }),
  ];
}
