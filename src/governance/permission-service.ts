/**
 * The permission service (DESIGN.md §5): policy, session approval modes, human decisions, session
 * grants and the single-use authorization rows of the ledger. Its `authorize` is the broker's hook.
 */
import { randomUUID } from "node:crypto";
import type { AuthorizationDecision, AuthorizationRequest, Authorize } from "./broker-types.js";
import { canonicalJson } from "./canonical-json.js";
import { type Clock, systemClock } from "./clock.js";
import { GovernanceError } from "./errors.js";
import { type Grant, type GrantStore, MemoryGrantStore } from "./grant-store.js";
import type { Ledger } from "./ledger.js";
import { isDangerousCall, permissionRisk } from "./permission-policy.js";
import { type RenderedPermission, renderPermission } from "./permission-render.js";
import { permissionCallKey, permissionFingerprint } from "./permission-request.js";
import {
  type ApprovalMode,
  PERMISSION_DECISIONS,
  type PermissionCard,
  type PermissionDecision,
  type PermissionDecisionSource,
  type PermissionEvaluation,
  type PermissionPolicy,
  permissionDecisionSchema,
} from "./permission-types.js";

/** Options of `PermissionService`. */
export interface PermissionServiceOptions {
  /** Where authorization rows go (usually the broker's ledger). */
  ledger: Ledger;
  /** Session grants and permission epochs. @default a `MemoryGrantStore` (grants die with the process) */
  grants?: GrantStore;
  /** @default systemClock */
  clock?: Clock;
  /** @default `{}`: the default danger rule, `ask_for_dangerous` */
  policy?: PermissionPolicy;
  /** Id generator of authorizations and grants. @default crypto.randomUUID */
  newId?: () => string;
}

/** How an approval card ended without a human answer: it waited too long, or the app cancelled it. */
export type PendingEndSource = "wait_timeout" | "cancelled";

/** What `PermissionService.decide` (or an ended card) recorded. */
export interface DecideResult {
  /** The authorization row written for this decision (the call's broker row will reference it). */
  authorizationId: string;
  decisionSource: "user_once" | "user_grant" | "user_deny" | PendingEndSource;
  /** The session grant an `allow_matching` decision created or reused. */
  grant?: Grant;
}

/** A decision waiting for its call, keyed by thread and tool call id; consumed by one `authorize`. */
interface RecordedDecision {
  fingerprint: string;
  decision: PermissionDecision;
  result: DecideResult;
  /** Why the call is refused when nobody decided (timeout, cancellation). */
  reason?: string;
}

/**
 * An approval card shown and not yet answered (`open`), or one that ended without an answer.
 * In memory: a new process starts with no pending cards (their graph tasks ask again).
 */
export interface PendingPermission {
  card: PermissionCard;
  sessionId: string;
  threadId?: string;
  /** When the card was first shown, by the service's clock (ms). */
  askedAt: number;
  state: "open" | "timed_out" | "cancelled";
}

interface PendingEntry extends PendingPermission {
  request: AuthorizationRequest;
}

const APPROVAL_MODES: readonly ApprovalMode[] = ["ask_for_dangerous", "always_allow"];

/**
 * Decides which governed calls may run. Hand `authorize` to the `Broker`; show `evaluate`'s card to
 * a human and record the answer with `decide` before the broker call of that tool call id.
 * @example
 * const permissions = new PermissionService({ ledger, grants: await SqliteGrantStore.open(path) });
 * const broker = new Broker({ ...deps, authorize: permissions.authorize });
 * const verdict = await permissions.evaluate(request);
 * if (verdict.outcome === "ask") await permissions.decide(request, { decision: "allow_once" });
 */
export class PermissionService {
  readonly #ledger: Ledger;
  readonly #grants: GrantStore;
  readonly #clock: Clock;
  readonly #policy: PermissionPolicy;
  readonly #newId: () => string;
  readonly #modes = new Map<string, ApprovalMode>();
  readonly #decisions = new Map<string, RecordedDecision>();
  readonly #pending = new Map<string, PendingEntry>();

  constructor(options: PermissionServiceOptions) {
    this.#ledger = options.ledger;
    this.#grants = options.grants ?? new MemoryGrantStore();
    this.#clock = options.clock ?? systemClock;
    this.#policy = options.policy ?? {};
    this.#newId = options.newId ?? randomUUID;
  }

  /**
   * The broker's permission hook: a recorded decision for this `threadId:toolCallId` is used (and
   * consumed); otherwise a call that is not dangerous, covered by a grant or in an `always_allow`
   * session is allowed with one new authorization row, and any other call is denied with
   * "approval required". Bound, so it can be passed as a plain function.
   * @param request the broker's description of the call
   * @returns the decision, with the authorization id the invocation row will reference
   */
  readonly authorize: Authorize = (request) => this.#authorize(request);

  /**
   * Sets how a session treats dangerous calls. Switching back to `ask_for_dangerous` asks again.
   * @param sessionId the session (a LangGraph thread unless the app says otherwise)
   * @param mode `ask_for_dangerous` or `always_allow`
   * @throws GovernanceError `INVALID_INPUT` for another mode
   */
  setApprovalMode(sessionId: string, mode: ApprovalMode): void {
    if (!APPROVAL_MODES.includes(mode)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Unknown approval mode '${String(mode)}'; use ${APPROVAL_MODES.join(" or ")}.`,
      );
    }
    this.#modes.set(sessionId, mode);
  }

  /**
   * The session's approval mode.
   * @param sessionId the session
   * @returns the mode set for it, else the policy's default (`ask_for_dangerous`)
   */
  approvalMode(sessionId: string): ApprovalMode {
    return this.#modes.get(sessionId) ?? this.#policy.defaultApprovalMode ?? "ask_for_dangerous";
  }

  /**
   * What the policy says about a call, without recording anything.
   * @param request the broker's description of the call
   * @returns `allow` with the reason, or `ask` with the approval card
   * @throws whatever the app's `isDangerous` predicate throws
   */
  async evaluate(request: AuthorizationRequest): Promise<PermissionEvaluation> {
    if (!this.isDangerous(request)) return { outcome: "allow", decisionSource: "policy_not_dangerous" };
    const rendered = renderPermission(request);
    if (await this.#coveringGrant(request, rendered))
      return { outcome: "allow", decisionSource: "existing_grant" };
    if (this.approvalMode(request.sessionId) === "always_allow") {
      return { outcome: "allow", decisionSource: "always_allow" };
    }
    return { outcome: "ask", card: this.#card(request, rendered) };
  }

  /**
   * Whether the policy alone makes the call dangerous (before grants and approval modes); synchronous,
   * so an approval gate can decide whether to ask before any await.
   * @param request the call
   * @returns true when the call needs a decision, a grant or `always_allow`
   * @throws whatever the app's `isDangerous` predicate throws
   */
  isDangerous(request: AuthorizationRequest): boolean {
    return isDangerousCall(request, this.#policy);
  }

  /**
   * The approval card of a call, whatever the policy says (what `evaluate` shows when it asks).
   * @param request the call
   * @returns the card; its `requestId` is stable for the same call
   */
  cardFor(request: AuthorizationRequest): PermissionCard {
    return this.#card(request, renderPermission(request));
  }

  /**
   * Notes that a call's card is being shown; the first note starts its wait (see `expirePending`).
   * @param request the call (with its `toolCallId`)
   * @returns the pending entry (the existing one when the card was shown before)
   * @throws GovernanceError `INVALID_INPUT` for a request without `toolCallId`
   */
  notePending(request: AuthorizationRequest): PendingPermission {
    const key = requireCallKey(request);
    const known = this.#pending.get(key);
    if (known) return publicPending(known);
    const entry: PendingEntry = {
      card: this.cardFor(request),
      sessionId: request.sessionId,
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      askedAt: this.#clock.now(),
      state: "open",
      request,
    };
    this.#pending.set(key, entry);
    return publicPending(entry);
  }

  /**
   * The pending entry of a call, if its card was shown and not answered.
   * @param request the call
   * @returns the entry, or `undefined`
   */
  pendingFor(request: AuthorizationRequest): PendingPermission | undefined {
    const key = permissionCallKey(request);
    const entry = key === undefined ? undefined : this.#pending.get(key);
    return entry && publicPending(entry);
  }

  /**
   * Cards still waiting for an answer.
   * @param options `threadId` to list one thread's cards
   * @returns the open entries, oldest first
   */
  listPending(options: { threadId?: string } = {}): PendingPermission[] {
    return [...this.#pending.values()]
      .filter(
        (e) => e.state === "open" && (options.threadId === undefined || e.threadId === options.threadId),
      )
      .map(publicPending);
  }

  /**
   * Turns an open card that waited at least `timeoutMs` into a denial: one authorization row
   * (`wait_timeout`), and the call's broker invocation is refused. Recorded once per card.
   * @param request the call
   * @param timeoutMs the longest wait
   * @returns the recorded denial, or `undefined` when the card is not open or still within its time
   */
  async expirePending(request: AuthorizationRequest, timeoutMs: number): Promise<DecideResult | undefined> {
    const key = permissionCallKey(request);
    const entry = key === undefined ? undefined : this.#pending.get(key);
    if (entry?.state !== "open" || this.#clock.now() - entry.askedAt < timeoutMs) return undefined;
    const reason = `nobody answered the approval request within ${timeoutMs} ms`;
    return this.#endPending(key as string, entry, "wait_timeout", reason);
  }

  /**
   * Cancels every open card of a thread (an app abandons a run): each gets one authorization row
   * (`cancelled`) and its call, should its task run again, is refused without asking.
   * @param threadId the LangGraph thread (the session when calls carry no thread)
   * @param message why, shown to the model if the call's task runs again
   * @returns the cancelled entries
   */
  async cancelPending(threadId: string, message?: string): Promise<PendingPermission[]> {
    const cancelled: PendingPermission[] = [];
    for (const [key, entry] of this.#pending) {
      if (entry.state !== "open" || (entry.threadId ?? entry.sessionId) !== threadId) continue;
      const reason = `the approval request was cancelled${message ? `: ${message}` : ""}`;
      // #endPending flips the state before its first await, so a second cancel finds nothing open.
      cancelled.push(publicPending(entry));
      await this.#endPending(key, entry, "cancelled", reason);
    }
    return cancelled.map((e) => ({ ...e, state: "cancelled" }));
  }

  /**
   * Records a human's decision on one call: `allow_once` (this call only), `allow_matching` (this call,
   * plus one session grant on the normalized resource bound to the tool definition) or `deny`.
   * Appends one authorization row; the broker call of the same `threadId:toolCallId` consumes it.
   * Recording the same decision again for a call still waiting returns the first record.
   * @param request the call the card was about (with its `toolCallId`)
   * @param decision the resume value; validated with `permissionDecisionSchema`
   * @returns the authorization id and, for `allow_matching`, the grant
   * @throws GovernanceError `INVALID_INPUT` for a malformed decision or a request without `toolCallId`
   */
  async decide(request: AuthorizationRequest, decision: unknown): Promise<DecideResult> {
    const parsed = permissionDecisionSchema.safeParse(decision);
    if (!parsed.success) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Invalid permission decision: expected {decision: ${PERMISSION_DECISIONS.join(" | ")}, message?: string}.`,
        {
          data: { issues: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })) },
        },
      );
    }
    const key = requireCallKey(request);
    const fingerprint = permissionFingerprint(request);
    // Answered: the card no longer waits (a timeout or cancel cannot end it any more).
    if (this.#pending.get(key)?.state === "open") this.#pending.delete(key);
    const waiting = this.#decisions.get(key);
    if (
      waiting?.fingerprint === fingerprint &&
      canonicalJson(waiting.decision) === canonicalJson(parsed.data)
    ) {
      return waiting.result;
    }
    const rendered = renderPermission(request);
    const result = await this.#recordDecision(request, rendered, parsed.data);
    this.#decisions.set(key, { fingerprint, decision: parsed.data, result });
    return result;
  }

  /**
   * Session grants, oldest first.
   * @param options `sessionId` to list one session's grants
   * @returns the grants
   */
  listGrants(options: { sessionId?: string } = {}): Promise<Grant[]> {
    return this.#grants.list(options.sessionId ? { sessionId: options.sessionId } : {});
  }

  /**
   * Revokes a grant: later matching calls ask again.
   * @param id the grant id
   * @returns the revoked grant
   * @throws GovernanceError `UNKNOWN_ID` when no grant has this id
   */
  async revokeGrant(id: string): Promise<Grant> {
    const revoked = await this.#grants.revoke(id);
    if (!revoked) throw new GovernanceError("UNKNOWN_ID", `No grant with id '${id}'.`, { data: { id } });
    return revoked;
  }

  /**
   * The session's permission epoch: how many authorizations it has recorded.
   * @param sessionId the session
   * @returns 0 before the first authorization
   */
  epoch(sessionId: string): Promise<number> {
    return this.#grants.currentEpoch(sessionId);
  }

  async #authorize(request: AuthorizationRequest): Promise<AuthorizationDecision> {
    const key = permissionCallKey(request);
    const recorded = key === undefined ? undefined : this.#decisions.get(key);
    if (key !== undefined && recorded !== undefined) {
      // Single use: whatever happens next, this decision cannot authorize another call.
      this.#decisions.delete(key);
      if (recorded.fingerprint === permissionFingerprint(request)) return toBrokerDecision(recorded);
    }
    const verdict = await this.evaluate(request);
    if (verdict.outcome === "allow") {
      const id = await this.#append(request, renderPermission(request), verdict.decisionSource);
      return { allowed: true, authorizationId: id };
    }
    const { card } = verdict;
    const call = request.toolCallId === undefined ? "the call" : `tool call '${request.toolCallId}'`;
    return {
      allowed: false,
      reason:
        `approval required: ${card.summary} (${card.action} on ${card.resource}, risk ${card.risk}). ` +
        `Record a decision for ${call} with PermissionService.decide (allow_once, allow_matching or deny), ` +
        `or set the session's approval mode to always_allow.`,
    };
  }

  async #endPending(
    key: string,
    entry: PendingEntry,
    source: PendingEndSource,
    reason: string,
  ): Promise<DecideResult> {
    entry.state = source === "wait_timeout" ? "timed_out" : "cancelled";
    const { request } = entry;
    const authorizationId = await this.#append(request, renderPermission(request), source);
    const result: DecideResult = { authorizationId, decisionSource: source };
    const decision: PermissionDecision = { decision: "deny" };
    this.#decisions.set(key, { fingerprint: permissionFingerprint(request), decision, result, reason });
    return result;
  }

  async #recordDecision(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decision: PermissionDecision,
  ): Promise<DecideResult> {
    if (decision.decision === "allow_matching") {
      const { grant } = await this.#grants.ensure({
        id: this.#newId(),
        sessionId: request.sessionId,
        action: rendered.action,
        resource: rendered.normalizedResource,
        toolDefinitionHash: request.definitionHash,
        createdAt: this.#isoNow(),
      });
      const authorizationId = await this.#append(request, rendered, "user_grant");
      return { authorizationId, decisionSource: "user_grant", grant };
    }
    const decisionSource = decision.decision === "allow_once" ? "user_once" : "user_deny";
    return { authorizationId: await this.#append(request, rendered, decisionSource), decisionSource };
  }

  #coveringGrant(request: AuthorizationRequest, rendered: RenderedPermission): Promise<Grant | undefined> {
    return this.#grants.find({
      sessionId: request.sessionId,
      action: rendered.action,
      resource: rendered.normalizedResource,
      toolDefinitionHash: request.definitionHash,
    });
  }

  async #append(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decisionSource: PermissionDecisionSource | PendingEndSource,
  ): Promise<string> {
    const id = this.#newId();
    const epoch = await this.#grants.nextEpoch(request.sessionId);
    await this.#ledger.appendAuthorization({
      id,
      sessionId: request.sessionId,
      sourceId: request.sourceId,
      toolId: request.toolId,
      action: rendered.action,
      resource: rendered.normalizedResource,
      decisionSource,
      createdAt: this.#isoNow(),
      epoch,
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    });
    return id;
  }

  #card(request: AuthorizationRequest, rendered: RenderedPermission): PermissionCard {
    return {
      type: "permission",
      requestId: `perm-${permissionFingerprint(request).slice(0, 32)}`,
      action: rendered.action,
      resource: rendered.resource,
      summary: rendered.summary,
      sourceId: request.sourceId,
      toolId: request.toolId,
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
      args: request.input,
      risk: permissionRisk(request),
      allowedDecisions: [...PERMISSION_DECISIONS],
    };
  }

  #isoNow(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}

function toBrokerDecision(recorded: RecordedDecision): AuthorizationDecision {
  const { authorizationId } = recorded.result;
  if (recorded.decision.decision !== "deny") return { allowed: true, authorizationId };
  if (recorded.reason !== undefined) return { allowed: false, authorizationId, reason: recorded.reason };
  const message = recorded.decision.message?.trim();
  return { allowed: false, authorizationId, reason: `denied by the user${message ? `: ${message}` : ""}` };
}

function requireCallKey(request: AuthorizationRequest): string {
  const key = permissionCallKey(request);
  if (key === undefined) {
    throw new GovernanceError("INVALID_INPUT", "A permission decision needs the request's toolCallId.");
  }
  return key;
}

function publicPending(entry: PendingEntry): PendingPermission {
  const { request: _request, ...rest } = entry;
  return { ...rest };
}
