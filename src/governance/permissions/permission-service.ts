/**
 * The permission service: policy, session approval modes, human decisions, session
 * grants and the single-use authorization rows of the ledger. Its `authorize` is the broker's hook.
 */
import { randomUUID } from "node:crypto";
import { type Clock, GovernanceError, systemClock } from "../../core/index.js";
import type { LedgerWriter } from "../audit/index.js";
import type { AuthorizationRequest, Authorize, AuthorizeResult } from "./authorization.js";
import { AuthorizationRecorder } from "./authorization-recorder.js";
import { type Grant, type GrantListOptions, type GrantStore, MemoryGrantStore } from "./grant-store.js";
import { type PendingPermission, PendingPermissions } from "./pending-permissions.js";
import { isDangerousCall } from "./permission-policy.js";
import { permissionCard, type RenderedPermission, renderPermission } from "./permission-render.js";
import { permissionFingerprint } from "./permission-request.js";
import {
  type ApprovalMode,
  PERMISSION_DECISIONS,
  type PermissionCard,
  type PermissionEvaluation,
  type PermissionPolicy,
  permissionDecisionSchema,
} from "./permission-types.js";
import { RecordedDecisions, requireCallKey } from "./recorded-decisions.js";
import { type DecideResult, MemorySessionStateStore, type SessionStateStore } from "./session-state-store.js";

/** Options of `PermissionService`. */
export interface PermissionServiceOptions {
  /** The ledger's one writer, which authorization rows go through (the broker's own). */
  ledgerWriter: LedgerWriter;
  /** Session grants and permission epochs. @default a `MemoryGrantStore` (grants die with the process) */
  grants?: GrantStore;
  /** @default systemClock */
  clock?: Clock;
  /** @default `{}`: the default danger rule, `ask_for_dangerous` */
  policy?: PermissionPolicy;
  /** Id generator of authorizations and grants. @default crypto.randomUUID */
  newId?: () => string;
  /**
   * Approval modes and recorded decisions (share it with `SessionSettings`). A shared store lets
   * every replica honour a mode set, or a decision recorded, on another.
   * @default a `MemorySessionStateStore` (this process only)
   */
  state?: SessionStateStore | undefined;
}

const APPROVAL_MODES: readonly ApprovalMode[] = ["ask_for_dangerous", "always_allow"];

/**
 * Decides which governed calls may run. Hand `authorize` to the `Broker`; show `evaluate`'s card to
 * a human and record the answer with `decide` before the broker call of that tool call id.
 * @example
 * const permissions = new PermissionService({ ledgerWriter, grants: await SqliteGrantStore.open(path) });
 * const broker = new Broker({ ...deps, authorize: permissions.authorize });
 * const verdict = await permissions.evaluate(request);
 * if (verdict.outcome === "ask") await permissions.decide(request, { decision: "allow_once" });
 */
export class PermissionService {
  readonly #grants: GrantStore;
  readonly #policy: PermissionPolicy;
  readonly #recorder: AuthorizationRecorder;
  readonly #state: SessionStateStore;
  readonly #decisions: RecordedDecisions;
  readonly #pending: PendingPermissions;

  /** @param options the ledger, and optional grant store, clock, policy and id generator */
  constructor(options: PermissionServiceOptions) {
    const clock = options.clock ?? systemClock;
    const newId = options.newId ?? randomUUID;
    this.#grants = options.grants ?? new MemoryGrantStore();
    this.#policy = options.policy ?? {};
    this.#state = options.state ?? new MemorySessionStateStore();
    this.#decisions = new RecordedDecisions(this.#state);
    this.#recorder = new AuthorizationRecorder({
      ledgerWriter: options.ledgerWriter,
      grants: this.#grants,
      clock,
      newId,
    });
    this.#pending = new PendingPermissions({ clock, recorder: this.#recorder, decisions: this.#decisions });
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
   * Sets how a session treats one principal's dangerous calls (a mode is a principal's: it never
   * applies to another's calls in the same session). Switching back to `ask_for_dangerous` asks again.
   * In memory the mode applies at once; await it with a shared store (it resolves once stored).
   * @param sessionId the session (a LangGraph thread unless the app says otherwise)
   * @param mode `ask_for_dangerous` or `always_allow`
   * @param principal whose calls it applies to @default none: the single user's
   * @throws GovernanceError `INVALID_INPUT` (synchronously) for another mode; the promise rejects
   *   with `UPSTREAM_UNAVAILABLE` when the store is closed or unreachable
   */
  setApprovalMode(sessionId: string, mode: ApprovalMode, principal?: string | undefined): Promise<void> {
    if (!APPROVAL_MODES.includes(mode)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Unknown approval mode '${String(mode)}'; use ${APPROVAL_MODES.join(" or ")}.`,
      );
    }
    return this.#state.setApprovalMode(sessionId, mode, principal);
  }

  /**
   * The approval mode of a session for one principal.
   * @param sessionId the session
   * @param principal whose mode @default none: the single user's
   * @returns the mode set, else the policy's default (`ask_for_dangerous`)
   */
  approvalMode(sessionId: string, principal?: string | undefined): ApprovalMode {
    return (
      this.#state.approvalMode(sessionId, principal) ??
      this.#policy.defaultApprovalMode ??
      "ask_for_dangerous"
    );
  }

  /**
   * The approval modes set, from the session state's local view (a shared store's view of every
   * replica's writes), ordered by session id, then principal (none first). A session and principal
   * not listed has the policy's default.
   * @param options `sessionId` and/or `principal` to list only theirs
   * @returns each session, principal and mode
   * @example
   * for (const { sessionId, mode } of governance.permissions.listApprovalModes()) console.log(sessionId, mode);
   */
  listApprovalModes(
    options: { sessionId?: string | undefined; principal?: string | undefined } = {},
  ): { sessionId: string; principal?: string; mode: ApprovalMode }[] {
    const { sessionId, principal } = options;
    return this.#state.listSessions().flatMap((entry) =>
      entry.approvalMode === undefined ||
      (sessionId !== undefined && entry.sessionId !== sessionId) ||
      (principal !== undefined && entry.principal !== principal)
        ? []
        : [
            {
              sessionId: entry.sessionId,
              ...(entry.principal === undefined ? {} : { principal: entry.principal }),
              mode: entry.approvalMode,
            },
          ],
    );
  }

  /**
   * What the policy says about a call, without recording anything.
   * @param request the broker's description of the call
   * @returns `allow` with the reason, or `ask` with the approval card
   * @throws whatever the app's `isDangerous` predicate throws
   */
  async evaluate(request: AuthorizationRequest): Promise<PermissionEvaluation> {
    return this.#evaluate(request, this.isDangerous(request));
  }

  async #evaluate(request: AuthorizationRequest, dangerous: boolean): Promise<PermissionEvaluation> {
    if (!dangerous) return { outcome: "allow", decisionSource: "policy_not_dangerous" };
    const rendered = renderPermission(request);
    if (await this.#coveringGrant(request, rendered))
      return { outcome: "allow", decisionSource: "existing_grant" };
    if (this.approvalMode(request.sessionId, request.principal) === "always_allow") {
      return { outcome: "allow", decisionSource: "always_allow" };
    }
    return { outcome: "ask", card: permissionCard(request, rendered) };
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
    return permissionCard(request, renderPermission(request));
  }

  /**
   * Notes that a call's card is being shown; the first note starts its wait (see `expirePending`).
   * @param request the call (with its `toolCallId`)
   * @returns the pending entry (the existing one when the card was shown before)
   * @throws GovernanceError `INVALID_INPUT` for a request without `toolCallId`
   */
  notePending(request: AuthorizationRequest): PendingPermission {
    return this.#pending.note(request, () => this.cardFor(request));
  }

  /**
   * The pending entry of a call, if its card was shown and not answered.
   * @param request the call
   * @returns the entry, or `undefined`
   */
  pendingFor(request: AuthorizationRequest): PendingPermission | undefined {
    return this.#pending.get(request);
  }

  /**
   * Cards still waiting for an answer.
   * @param options `threadId` to list one thread's cards, `principal` one principal's
   * @returns the open entries, oldest first
   */
  listPending(options: { threadId?: string; principal?: string | undefined } = {}): PendingPermission[] {
    return this.#pending.list(options.threadId, options.principal);
  }

  /**
   * Turns an open card that waited at least `timeoutMs` into a denial: one authorization row
   * (`wait_timeout`), and the call's broker invocation is refused. Recorded once per card.
   * @param request the call
   * @param timeoutMs the longest wait
   * @returns the recorded denial, or `undefined` when the card is not open or still within its time
   */
  expirePending(request: AuthorizationRequest, timeoutMs: number): Promise<DecideResult | undefined> {
    return this.#pending.expire(request, timeoutMs);
  }

  /**
   * Cancels every open card of a thread (an app abandons a run), or the card of one call (its client
   * cancelled it): each gets one authorization row (`cancelled`) and its call, should it run again, is
   * refused without asking.
   * @param threadId the LangGraph thread (the session when calls carry no thread)
   * @param message why, shown to the model if the call's task runs again
   * @param options `toolCallId` to cancel only that call's card, `principal` only that principal's cards
   * @returns the cancelled entries
   */
  cancelPending(
    threadId: string,
    message?: string,
    options: { toolCallId?: string | undefined; principal?: string | undefined } = {},
  ): Promise<PendingPermission[]> {
    return this.#pending.cancel(threadId, message, options.toolCallId, options.principal);
  }

  /**
   * Records a human's decision on one call: `allow_once` (this call only), `allow_matching` (this call,
   * plus one session grant on the card's `matchingScope` bound to the tool definition),
   * `allow_always` (this call, then the session's approval mode becomes `always_allow`) or `deny`.
   * A decision is about the request's principal's call: its grant and mode are that principal's, and
   * it authorizes no other principal's call. Whoever answers on a principal's behalf must be that
   * principal (or an administrator acting for them): the caller checks that.
   * Appends one authorization row; the broker call of the same `threadId:toolCallId` consumes it.
   * Recording the same decision again for a call still waiting returns the first record; so does any
   * decision for a call whose decision a broker call (on any replica) already consumed.
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
    this.#pending.answered(key);
    const waiting = await this.#decisions.repeated(key, fingerprint, parsed.data);
    if (waiting) return waiting;
    const rendered = renderPermission(request);
    const result = await this.#recorder.recordDecision(request, rendered, parsed.data);
    const stored = await this.#decisions.set(key, { fingerprint, decision: parsed.data, result });
    // Another replica consumed a decision of this very call meanwhile: the call runs with that one.
    if (stored.taken) return stored.result;
    if (parsed.data.decision === "allow_always")
      await this.setApprovalMode(request.sessionId, "always_allow", request.principal);
    return result;
  }

  /**
   * Grants a session, outside any call, what an `allow_matching` answer grants (an operator approving
   * out of band, `sciencegate grants add`): one session grant on the scope, bound to the tool's
   * definition, and one `user_grant` authorization row without a tool call id.
   * @param request the tool, the session and the principal the grant is for (a `toolCallId` is not
   *   needed; `input` renders the scope)
   * @param scope the grant scope (a card's `matchingScope.resource`) @default the request's own scope
   * @returns the authorization id and the grant (an equal grant that exists is reused)
   * @throws GovernanceError `INVALID_INPUT` for an empty scope
   */
  async grant(request: AuthorizationRequest, scope?: string): Promise<DecideResult & { grant: Grant }> {
    const rendered = renderPermission(request);
    const granted = { ...rendered, scope: scope ?? rendered.scope };
    const result = await this.#recorder.recordDecision(request, granted, { decision: "allow_matching" });
    return result as DecideResult & { grant: Grant };
  }

  /**
   * Session grants, oldest first.
   * @param options `sessionId` to list one session's grants, `principal` one principal's
   * @returns the grants
   */
  listGrants(options: GrantListOptions = {}): Promise<Grant[]> {
    return this.#grants.list(options);
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

  async #authorize(request: AuthorizationRequest): Promise<AuthorizeResult> {
    // Single use: a recorded decision is consumed here, whatever happens next.
    // The app's predicate runs once per call, whether the recorded-decision check needs it or not.
    let dangerous: boolean | undefined;
    const isDangerous = () => {
      dangerous ??= this.isDangerous(request);
      return dangerous;
    };
    const recorded = await this.#decisions.take(request, isDangerous);
    if (recorded) return recorded;
    const verdict = await this.#evaluate(request, isDangerous());
    if (verdict.outcome === "allow") {
      const rendered = renderPermission(request);
      if (verdict.decisionSource === "policy_not_dangerous") {
        // Nobody decided anything about a safe call: its row is written with the invocation row, in
        // the same commit, ahead of it (ARCHITECTURE.md, "Record"); the call runs meanwhile.
        const { id, ready, release } = this.#recorder.hold(request, rendered, verdict.decisionSource);
        return { allowed: true, authorizationId: id, commit: release, ready };
      }
      const id = await this.#recorder.append(request, rendered, verdict.decisionSource);
      return { allowed: true, authorizationId: id };
    }
    const { card } = verdict;
    const call = request.toolCallId === undefined ? "the call" : `tool call '${request.toolCallId}'`;
    return {
      allowed: false,
      reason:
        `approval required: ${card.summary} (${card.action} on ${card.resource}, risk ${card.risk}). ` +
        `Nothing was run. To let a human answer, run ${call} in a graph compiled with a checkpointer, whose ` +
        "executor shows approval cards (the default of createGovernedAgent, createGovernedToolNode, " +
        "governanceMiddleware and prepareFixedToolTable unless approvalHook is false), or with " +
        "`sciencegate call --approve`; or set the session's approval mode to always_allow.",
    };
  }

  async #coveringGrant(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
  ): Promise<Grant | undefined> {
    const key = {
      sessionId: request.sessionId,
      principal: request.principal,
      action: rendered.action,
      toolDefinitionHash: request.definitionHash,
    };
    const scoped = await this.#grants.find({ ...key, resource: rendered.scope });
    if (scoped || rendered.scope === rendered.normalizedResource) return scoped;
    // A grant on the tool-wide default was shown as covering every call of the tool, so it does.
    return this.#grants.find({ ...key, resource: rendered.normalizedResource });
  }
}
