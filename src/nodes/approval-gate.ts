/**
 * The approval gate: puts a dangerous call without cover in front of a human through
 * LangGraph's `interrupt()`, one card per call in the call's own task, and records the answer with the
 * permission service BEFORE the call runs; the permission hook (the broker's, or the download
 * manager's) then consumes it. The core works on any `AuthorizationRequest`; the gate applies it to
 * MCP calls, `createGovernedAgent` to `artifact_download`.
 */
import { interrupt, isGraphInterrupt } from "@langchain/langgraph";
import { z } from "zod";
import { GovernanceError } from "../core/index.js";
import type { Ledger } from "../governance/audit/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import type { AuthorizationRequest, PermissionService } from "../governance/permissions/index.js";
import {
  createAuthorizationRequest,
  PERMISSION_DECISIONS,
  type PermissionCard,
  type PermissionDecision,
  permissionDecisionSchema,
} from "../governance/permissions/index.js";
import type { ApprovalDecision, ApprovalHook, ApprovalRequest } from "./approval-hook.js";

/** What the gate needs of a governance runtime (`createGovernance` returns one). */
export interface ApprovalGateRuntime {
  catalog: SourceCatalog;
  ledger: Ledger;
  permissions: PermissionService;
  /** `false` when the broker does not ask `permissions.authorize`; the gate then refuses to work. */
  permissionsEnforced?: boolean;
}

/** Options of `createApprovalGate`. */
export interface ApprovalGateOptions {
  /**
   * A card unanswered for at least this long (by the permission service's clock) counts as denied
   * when its task next runs. @default none: a card waits forever
   */
  waitTimeoutMs?: number;
}

/** The interrupt value of one card: the permission card, plus why the last answer was refused. */
export type ApprovalInterruptValue = PermissionCard & {
  /** Set when the card is asked again because the previous resume value was malformed. */
  invalidResponse?: string;
};

/** The JSON Schema of a resume value, surfaced to clients as the interrupt's `response_schema`. */
export const permissionDecisionJsonSchema = z.toJSONSchema(permissionDecisionSchema) as Record<
  string,
  unknown
>;

/**
 * Asks about one call described by its `AuthorizationRequest`, inside the call's own graph task: the
 * core of the approval gate, shared with the `artifact_download` built-in. `request` may be a
 * function: the task is then registered before it runs (synchronously), so a sibling task waits for
 * this one's answer even when building the request takes I/O (a download plan).
 * @returns `undefined` to let the call go on to the permission hook (which consumes the recorded
 *   decision, a grant or the session mode), or a denial when the graph cannot pause for the card
 * @throws the LangGraph interrupt carrying the card when a human must answer
 */
export type AuthorizationApproval = (
  sessionId: string,
  request: AuthorizationRequest | undefined | (() => Promise<AuthorizationRequest | undefined>),
) => Promise<ApprovalDecision | undefined>;

/**
 * Creates the approval core. A call the policy finds safe, or one covered by a grant or by the
 * session's `always_allow` mode, passes without a card. A dangerous call raises exactly one
 * `interrupt()` with a {@link PermissionCard}; the resume value is validated, and a malformed one asks
 * again with `invalidResponse` set. The decision is recorded with `permissions.decide` before the call
 * runs; an `allow_matching` grant releases every covered sibling waiting on the same resume.
 * @param governance catalog, ledger and permission service (`createGovernance`)
 * @param options the optional wait timeout
 * @returns the approval function
 * @example
 * const approve = createAuthorizationApproval(governance);
 * const denied = await approve(sessionId, () => buildRequest()); // may interrupt() with a card
 */
export function createAuthorizationApproval(
  governance: ApprovalGateRuntime,
  options: ApprovalGateOptions = {},
): AuthorizationApproval {
  const { permissions } = governance;
  const answers = new SessionAnswers();
  return async (sessionId, build) => {
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
      const peeked = peekAnswer(permissions.cardFor(request));
      if (peeked.answered) return await recordAnswer(governance, request, peeked.decision, options);
      release();
      return await waitOrPass(governance, request, peeked.pause, answers, options);
    } finally {
      release();
    }
  };
}

/**
 * Creates the approval gate for MCP calls: {@link createAuthorizationApproval} over the broker's own
 * `AuthorizationRequest` of each call. `deny` makes the broker refuse the call with a structured
 * `PERMISSION_DENIED` (with the human's message), audited in the ledger.
 * @param governance catalog, ledger and permission service (`createGovernance`)
 * @param options the optional wait timeout
 * @returns the hook for `createGovernedToolNode({approvalHook})` / `createGovernedAgent`
 * @throws GovernanceError `INVALID_CONFIG` when the broker does not enforce permissions
 * @example
 * const agent = createGovernedAgent({ model, governance, checkpointer, approvalHook: createApprovalGate(governance) });
 * const paused = await agent.invoke(input, config); // paused.__interrupt__: one card per dangerous call
 * await agent.invoke(new Command({ resume: { [card.id]: { decision: "allow_once" } } }), config);
 */
export function createApprovalGate(
  governance: ApprovalGateRuntime,
  options: ApprovalGateOptions = {},
): ApprovalHook {
  if (governance.permissionsEnforced === false) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      "The approval gate records decisions for the broker's permission hook, but this broker does not ask it: " +
        "create the governance without enforcePermissions: false and without a custom authorize.",
    );
  }
  const approve = createAuthorizationApproval(governance, options);
  return (approval) => approve(approval.sessionId, authorizationRequestOf(governance.catalog, approval));
}

type Peek = { answered: true; decision: PermissionDecision } | { answered: false; pause: unknown };

/** Interrupts with the card; returns the (validated) answer, or the pause to rethrow later. */
function peekAnswer(card: PermissionCard): Peek {
  let value: ApprovalInterruptValue = card;
  try {
    for (;;) {
      const answer: unknown = interrupt(value, { responseSchema: permissionDecisionJsonSchema });
      const parsed = permissionDecisionSchema.safeParse(answer);
      if (parsed.success) return { answered: true, decision: parsed.data };
      // Ask again (a new interrupt id): a bad answer must not wedge the thread nor count as a denial.
      value = { ...card, invalidResponse: describeInvalid(parsed.error) };
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
  decision: PermissionDecision,
  options: ApprovalGateOptions,
): Promise<ApprovalDecision | undefined> {
  if (await hasRun(governance.ledger, request)) return undefined;
  if (options.waitTimeoutMs !== undefined) {
    if (await governance.permissions.expirePending(request, options.waitTimeoutMs)) return undefined;
  }
  await governance.permissions.decide(request, decision);
  return undefined;
}

async function waitOrPass(
  governance: ApprovalGateRuntime,
  request: AuthorizationRequest,
  pause: unknown,
  answers: SessionAnswers,
  options: ApprovalGateOptions,
): Promise<ApprovalDecision | undefined> {
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
  permissions.notePending(request);
  throw pause;
}

function authorizationRequestOf(
  catalog: SourceCatalog,
  approval: ApprovalRequest,
): AuthorizationRequest | undefined {
  try {
    return createAuthorizationRequest(catalog, {
      sourceId: approval.tool.sourceId,
      toolId: approval.tool.toolId,
      input: approval.args,
      session: approval.sessionId,
      toolCallId: approval.toolCallId,
      ...(approval.threadId === undefined ? {} : { threadId: approval.threadId }),
    });
  } catch {
    return undefined;
  }
}

/** A call with a ledger row already ran (or was refused): the broker replays it, nothing to ask. */
async function hasRun(ledger: Ledger, request: AuthorizationRequest): Promise<boolean> {
  if (request.threadId === undefined || request.toolCallId === undefined) return false;
  return (await ledger.findByCall(request.threadId, request.toolCallId)) !== undefined;
}

function describeInvalid(error: z.ZodError): string {
  const issues = error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; ");
  return `Invalid answer (${issues}). Resume with {decision: ${PERMISSION_DECISIONS.join(" | ")}, message?: string}.`;
}

/**
 * Tasks per session that have not yet peeked or are recording an answer. A task without an answer
 * waits for them before checking grants, so `allow_matching` on one card releases the others on the
 * same resume. `begin` returns an idempotent release.
 */
class SessionAnswers {
  readonly #inFlight = new Map<string, { count: number; waiters: Array<() => void> }>();

  begin(sessionId: string): () => void {
    const entry = this.#inFlight.get(sessionId) ?? { count: 0, waiters: [] };
    entry.count += 1;
    this.#inFlight.set(sessionId, entry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.count -= 1;
      if (entry.count > 0) return;
      this.#inFlight.delete(sessionId);
      for (const wake of entry.waiters) wake();
    };
  }

  async settled(sessionId: string): Promise<void> {
    // One macrotask turn: every task of the step starts (and registers its answer) in microtasks.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const entry = this.#inFlight.get(sessionId);
    if (entry) await new Promise<void>((resolve) => entry.waiters.push(resolve));
  }
}
