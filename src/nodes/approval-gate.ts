/**
 * The approval gate: puts a dangerous call without cover in front of a human through
 * LangGraph's `interrupt()`, one card per call in the call's own task, and records the answer with the
 * permission service BEFORE the call runs; the permission hook (the broker's, or the download
 * manager's) then consumes it. The core works on any `AuthorizationRequest`; the gate applies it to
 * MCP calls, `createGovernedAgent` to `artifact_download`.
 */
import { interrupt, isGraphInterrupt } from "@langchain/langgraph";
import { z } from "zod";
import {
  SPAN_ATTRIBUTES as A,
  GovernanceError,
  recordingActiveSpan,
  requireGovernanceOption,
  SPAN_NAMES,
} from "../core/index.js";
import type { LedgerReader } from "../governance/audit/index.js";
import { hasUpstreamQuestions } from "../governance/broker/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import type { AuthorizationRequest, PermissionService } from "../governance/permissions/index.js";
import {
  createAuthorizationRequest,
  type PermissionCard,
  permissionDecisionSchema,
} from "../governance/permissions/index.js";
import type { ApprovalHook, ApprovalHookResult, ApprovalRequest } from "./approval-hook.js";
import {
  type ApprovalAction,
  type ApprovalAnswer,
  type ApprovalCardFormat,
  type ApprovalInterruptValue,
  approvalInterruptValue,
  approvalResponseJsonSchema,
  parseApprovalAnswer,
} from "./hitl-protocol.js";
import { SessionAnswers } from "./session-answers.js";

/** What the gate needs of a governance runtime (`createGovernance` returns one). */
export interface ApprovalGateRuntime {
  catalog: SourceCatalog;
  ledger: LedgerReader;
  permissions: PermissionService;
  /** `false` when the broker does not ask `permissions.authorize`; the gate then refuses to work. */
  permissionsEnforced?: boolean;
}

/** Options of `createApprovalGate`. */
export interface ApprovalGateOptions {
  /** Catalog, ledger and permission service (`createGovernance`). */
  governance: ApprovalGateRuntime;
  /**
   * A card unanswered for at least this long (by the permission service's clock) counts as denied
   * when its task next runs. @default none: a card waits forever
   */
  waitTimeoutMs?: number;
  /**
   * The shape of the interrupt value: `hitl` raises langchain's `HITLRequest` of the one call (what
   * Agent Chat UI and LangGraph Studio render) with the native card under `sciencegate`; `native`
   * raises the `PermissionCard` itself. Either shape accepts both answers, `{decisions: [approve |
   * edit | reject]}` and `{decision, message?}`, so a client built for langchain's HITL cards and one
   * that speaks the native decision can resume the same thread.
   * @default "hitl"
   */
  cardFormat?: ApprovalCardFormat | undefined;
}

/** The JSON Schema of a native decision (`{decision, message?}`). */
export const permissionDecisionJsonSchema = z.toJSONSchema(permissionDecisionSchema) as Record<
  string,
  unknown
>;

/**
 * Asks about one call described by its `AuthorizationRequest`, inside the call's own graph task: the
 * core of the approval gate, shared with the `artifact_download` built-in. `request` may be a
 * function: the task is then registered before it runs (synchronously), so a sibling task waits for
 * this one's answer even when building the request takes I/O (a download plan). `action` names the
 * call on an `hitl` card and, with its `edit`, accepts edited arguments.
 * @returns `undefined` to let the call go on to the permission hook (which consumes the recorded
 *   decision, a grant or the session mode), `{allowed: true, args}` to run it with a human's edited
 *   arguments, or a denial when the graph cannot pause for the card
 * @throws the LangGraph interrupt carrying the card when a human must answer
 */
export type AuthorizationApproval = (
  sessionId: string,
  request: AuthorizationRequest | undefined | (() => Promise<AuthorizationRequest | undefined>),
  action?: ApprovalCall,
) => Promise<ApprovalHookResult | undefined>;

/**
 * The call behind a card as the model made it: its name and arguments for an `hitl` card and, when
 * `edit` builds the request of edited arguments, what makes an `edit` answer acceptable.
 */
export interface ApprovalCall extends ApprovalAction {
  /**
   * The `AuthorizationRequest` of the same call with edited arguments (`undefined` when they do not
   * make a valid request; the call then runs and its executor reports the invalid input).
   */
  edit?: (args: Record<string, unknown>) => AuthorizationRequest | undefined;
}

/**
 * Creates the approval core. A call the policy finds safe, or one covered by a grant or by the
 * session's `always_allow` mode, passes without a card. A dangerous call raises exactly one
 * `interrupt()` with langchain's `HITLRequest` of the call carrying its {@link PermissionCard} (or, with
 * `cardFormat: "native"`, the card itself); the resume value (an `HITLResponse` of one decision or
 * `{decision, message?}`) is
 * validated, and a malformed one asks again with `invalidResponse` set. The decision is recorded with
 * `permissions.decide` before the call runs; an `allow_matching` grant releases every covered sibling
 * waiting on the same resume.
 * @param governance catalog, ledger and permission service (`createGovernance`)
 * @param options the optional wait timeout and the card format
 * @returns the approval function
 * @example
 * const approve = createAuthorizationApproval(governance);
 * const denied = await approve(sessionId, () => buildRequest()); // may interrupt() with a card
 */
export function createAuthorizationApproval(
  governance: ApprovalGateRuntime,
  options: Omit<ApprovalGateOptions, "governance"> = {},
): AuthorizationApproval {
  const { permissions } = governance;
  const answers = new SessionAnswers();
  return async (sessionId, build, action) => {
    // Registered before any await: siblings of the same resume wait until this task has peeked.
    const release = answers.begin(sessionId);
    try {
      const request = typeof build === "function" ? await build() : build;
      // Invalid, unavailable or already run: the permission hook gives the precise answer.
      if (request === undefined || !permissions.isDangerous(request)) return undefined;
      // A card that timed out or was cancelled has its denial recorded; the hook consumes it.
      const ended = permissions.pendingFor(request)?.state;
      if (ended === "timed_out" || ended === "cancelled") return undefined;
      // Peek before any await, so that an answered task records while its siblings still wait.
      const peeked = peekAnswer(permissions.cardFor(request), options.cardFormat ?? "hitl", action);
      if (peeked.answered) return await recordAnswer(governance, request, peeked.answer, action, options);
      release();
      return await waitOrPass(governance, request, peeked.pause, answers, options);
    } finally {
      release();
    }
  };
}

/**
 * Creates the approval gate for MCP calls: `createAuthorizationApproval` over the broker's own
 * `AuthorizationRequest` of each call. `deny` makes the broker refuse the call with a structured
 * `PERMISSION_DENIED` (with the human's message), audited in the ledger; an `edit` runs the call with
 * the edited arguments (same tool), recording the decision for that edited call.
 * @param options `governance` (catalog, ledger and permission service, from `createGovernance`), the
 *   optional wait timeout and the card format (`hitl` by default)
 * @returns the hook for `createGovernedToolNode({approvalHook})` / `createGovernedAgent`
 * @throws GovernanceError `INVALID_CONFIG` when the broker does not enforce permissions
 * @example
 * const agent = createGovernedAgent({ model, governance, checkpointer, approvalHook: createApprovalGate({ governance }) });
 * const paused = await agent.invoke(input, config); // paused.__interrupt__: one HITLRequest per dangerous call
 * await agent.invoke(new Command({ resume: { [card.id]: { decisions: [{ type: "approve" }] } } }), config);
 */
export function createApprovalGate(options: ApprovalGateOptions): ApprovalHook {
  requireGovernanceOption(options, "createApprovalGate");
  const { governance } = options;
  if (governance.permissionsEnforced === false) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "The approval gate records decisions for the broker's permission hook, but this broker does not ask it: " +
        "create the governance without permissions: { enforce: false } and without a custom authorize.",
    );
  }
  const approve = createAuthorizationApproval(governance, options);
  const { catalog } = governance;
  return (approval) =>
    approve(approval.sessionId, authorizationRequestOf(catalog, approval, approval.args), {
      name: approval.name,
      args: approval.args,
      argsSchema: approval.tool.inputSchema,
      editable: true,
      edit: (args) => authorizationRequestOf(catalog, approval, args),
    });
}

type Peek = { answered: true; answer: ApprovalAnswer } | { answered: false; pause: unknown };

/** Interrupts with the card; returns the (validated) answer, or the pause to rethrow later. */
function peekAnswer(
  card: PermissionCard,
  format: ApprovalCardFormat,
  action: ApprovalCall | undefined,
): Peek {
  const call = action && { ...action, editable: action.editable === true && action.edit !== undefined };
  let value: ApprovalInterruptValue = card;
  try {
    for (;;) {
      const answer: unknown = interrupt(approvalInterruptValue(value, format, call), {
        responseSchema: approvalResponseJsonSchema,
      });
      const parsed = parseApprovalAnswer(answer, call);
      if (parsed.success) return { answered: true, answer: parsed.answer };
      // Ask again (a new interrupt id): a bad answer must not wedge the thread nor count as a denial.
      value = { ...card, invalidResponse: parsed.error };
    }
  } catch (error) {
    // Deliberately held: a covered call must pass without a card, so the pause is rethrown only
    // after the grant and approval-mode checks (interrupt() has no side effect when it throws).
    return { answered: false, pause: error };
  }
}

async function recordAnswer(
  governance: ApprovalGateRuntime,
  request: AuthorizationRequest,
  answer: ApprovalAnswer,
  action: ApprovalCall | undefined,
  options: Omit<ApprovalGateOptions, "governance">,
): Promise<ApprovalHookResult | undefined> {
  const { editedArgs } = answer;
  // An edited call runs (or replays) with the edited arguments, also when it already ran.
  const outcome: ApprovalHookResult | undefined =
    editedArgs === undefined ? undefined : { allowed: true, args: editedArgs };
  if (await hasRun(governance.ledger, request)) return outcome;
  const { permissions } = governance;
  // The answer came with a resume: the card's wait began in an earlier run of this task (known only to
  // the process that showed it), so the span of this run carries an event, not a duration.
  const span = recordingActiveSpan();
  const askedAt = span && permissions.pendingFor(request)?.askedAt;
  if (options.waitTimeoutMs !== undefined) {
    // Timed out: the recorded denial is consumed by the call as the model made it.
    if (await permissions.expirePending(request, options.waitTimeoutMs)) {
      span?.addEvent(SPAN_NAMES.approval, {
        [A.approvalOutcome]: "timed_out",
        [A.approvalResumed]: true,
        [A.approvalCardId]: permissions.cardFor(request).requestId,
      });
      return undefined;
    }
  }
  // The decision is about the call that runs: the edited one, fingerprinted with its own arguments.
  const decided = editedArgs === undefined ? request : action?.edit?.(editedArgs);
  if (decided !== undefined) await permissions.decide(decided, answer.decision);
  span?.addEvent(SPAN_NAMES.approval, {
    [A.approvalOutcome]: editedArgs === undefined ? "answered" : "edited",
    [A.approvalDecision]: answer.decision.decision,
    [A.approvalResumed]: true,
    [A.approvalCardId]: permissions.cardFor(request).requestId,
    ...(askedAt === undefined ? {} : { [A.approvalAskedAt]: new Date(askedAt).toISOString() }),
  });
  return outcome;
}

async function waitOrPass(
  governance: ApprovalGateRuntime,
  request: AuthorizationRequest,
  pause: unknown,
  answers: SessionAnswers,
  options: Omit<ApprovalGateOptions, "governance">,
): Promise<ApprovalHookResult | undefined> {
  const { permissions } = governance;
  await answers.settled(request.sessionId);
  if (await hasRun(governance.ledger, request)) return undefined;
  if (options.waitTimeoutMs !== undefined) {
    if (await permissions.expirePending(request, options.waitTimeoutMs)) return undefined;
  }
  const verdict = await permissions.evaluate(request);
  if (verdict.outcome === "allow") return undefined;
  if (!isGraphInterrupt(pause)) {
    const why = pause instanceof Error ? pause.message : String(pause);
    return {
      allowed: false,
      reason: `approval required (${verdict.card.summary}) but the graph cannot pause for it (${why}); compile it with a checkpointer or set the session to always_allow`,
    };
  }
  const pending = permissions.notePending(request);
  recordingActiveSpan()?.addEvent(SPAN_NAMES.approval, {
    [A.approvalOutcome]: "interrupted",
    [A.approvalCardId]: pending.card.requestId,
    [A.approvalAskedAt]: new Date(pending.askedAt).toISOString(),
  });
  throw pause;
}

function authorizationRequestOf(
  catalog: SourceCatalog,
  approval: ApprovalRequest,
  args: Record<string, unknown>,
): AuthorizationRequest | undefined {
  try {
    return createAuthorizationRequest(catalog, {
      sourceId: approval.tool.sourceId,
      toolId: approval.tool.toolId,
      input: args,
      sessionId: approval.sessionId,
      principal: approval.principal,
      toolCallId: approval.toolCallId,
      ...(approval.threadId === undefined ? {} : { threadId: approval.threadId }),
    });
  } catch {
    return undefined;
  }
}

/**
 * A call with a ledger row already ran (or was refused): the broker replays it, nothing to ask. A call
 * that paused for an upstream question was authorized by the invocation that asked, on which it goes
 * on: its decision is not recorded again (another process's memory may not know it was).
 */
async function hasRun(ledger: LedgerReader, request: AuthorizationRequest): Promise<boolean> {
  const { threadId, toolCallId } = request;
  if (threadId === undefined || toolCallId === undefined) return false;
  if ((await ledger.findByCall(threadId, toolCallId)) !== undefined) return true;
  return hasUpstreamQuestions(ledger, threadId, toolCallId);
}
