/**
 * Writes the permission service's authorization rows: one ledger row per decision, numbered by the
 * session's permission epoch (its `resource` is the grant scope, its `principal` the call's), and the
 * session grant an `allow_matching` decision creates (the call's principal's only).
 */

import type { Clock } from "../../core/index.js";
import type { AuthorizationRecord, HeldAuthorization, LedgerWriter } from "../audit/index.js";
import type { AuthorizationRequest } from "./authorization.js";
import type { GrantStore } from "./grant-store.js";
import type { RenderedPermission } from "./permission-render.js";
import type { PermissionDecision, PermissionDecisionSource } from "./permission-types.js";
import type { DecideResult, PendingEndSource } from "./session-state-store.js";

const USER_SOURCES = {
  allow_once: "user_once",
  allow_always: "user_always",
  deny: "user_deny",
} as const;

/** Options of `AuthorizationRecorder` (the permission service passes its resolved defaults). */
export interface AuthorizationRecorderOptions {
  /** The ledger's writer, which authorization rows go through. */
  ledgerWriter: LedgerWriter;
  /** Session grants and permission epochs. */
  grants: GrantStore;
  /** Stamps `createdAt` of rows and grants. */
  clock: Clock;
  /** Id generator of authorizations and grants. */
  newId: () => string;
}

/** Appends authorization rows (and grants) for a `PermissionService`. */
export class AuthorizationRecorder {
  readonly #ledger: LedgerWriter;
  readonly #grants: GrantStore;
  readonly #clock: Clock;
  readonly #newId: () => string;

  /** @param options ledger, grant store, clock and id generator */
  constructor(options: AuthorizationRecorderOptions) {
    this.#ledger = options.ledgerWriter;
    this.#grants = options.grants;
    this.#clock = options.clock;
    this.#newId = options.newId;
  }

  /**
   * Records a human's decision: `allow_matching` also ensures one session grant on the rendered
   * scope bound to the tool definition. (`allow_always` is recorded as `user_always`; the service
   * switches the session's mode.)
   * @param request the call decided on
   * @param rendered `renderPermission(request)`
   * @param decision the validated decision
   * @returns the authorization id, the decision source and, for `allow_matching`, the grant
   * @throws whatever the ledger or grant store throws
   */
  async recordDecision(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decision: PermissionDecision,
  ): Promise<DecideResult> {
    if (decision.decision === "allow_matching") {
      const { grant } = await this.#grants.ensure({
        id: this.#newId(),
        sessionId: request.sessionId,
        principal: request.principal,
        action: rendered.action,
        resource: rendered.scope,
        toolDefinitionHash: request.definitionHash,
        createdAt: this.#isoNow(),
      });
      const authorizationId = await this.append(request, rendered, "user_grant");
      return { authorizationId, decisionSource: "user_grant", grant };
    }
    const decisionSource = USER_SOURCES[decision.decision];
    return { authorizationId: await this.append(request, rendered, decisionSource), decisionSource };
  }

  /**
   * Appends one authorization row, advancing the session's permission epoch.
   * @param request the call
   * @param rendered `renderPermission(request)`
   * @param decisionSource why the call was allowed or refused
   * @returns the new authorization id, once the row is durable
   * @throws whatever the ledger or grant store throws
   */
  async append(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decisionSource: PermissionDecisionSource | PendingEndSource,
  ): Promise<string> {
    const record = await this.#record(this.#newId(), request, rendered, decisionSource);
    await this.#ledger.appendAuthorization(record);
    return record.id;
  }

  /**
   * Like `append`, but the ledger's writer holds the row until `release` queues it with the row of
   * the call it allows (one commit for both; see `LedgerWriter.hold`). Returns at once: the session's
   * next epoch is asked for meanwhile, and `ready` says when the row has it and is held.
   * @param request the call
   * @param rendered `renderPermission(request)`
   * @param decisionSource why the call was allowed
   * @returns the new authorization id; `ready`, which resolves once the row is held (nothing of the
   *   call may start before) and rejects with what the grant store or the writer's `hold` threw; and
   *   `release`, which queues the row (at once after `ready`) and resolves once it is durable
   */
  hold(
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decisionSource: PermissionDecisionSource,
  ): { id: string; ready: () => Promise<void>; release: () => Promise<void> } {
    const id = this.#newId();
    let held: HeldAuthorization | undefined;
    const holding = this.#record(id, request, rendered, decisionSource).then((record) => {
      held = this.#ledger.hold(record);
    });
    // Whoever awaits `ready` or `release` sees a failure; nothing else should report it.
    holding.catch(() => {});
    return {
      id,
      ready: () => holding,
      // Once held, queued in this same turn: the call's own row, appended right after, shares its commit.
      release: () => (held ? held.release() : holding.then(() => (held as HeldAuthorization).release())),
    };
  }

  /** The row of one decision, numbered by the session's next permission epoch. */
  async #record(
    id: string,
    request: AuthorizationRequest,
    rendered: RenderedPermission,
    decisionSource: PermissionDecisionSource | PendingEndSource,
  ): Promise<AuthorizationRecord> {
    const epoch = await this.#grants.nextEpoch(request.sessionId);
    return {
      id,
      sessionId: request.sessionId,
      sourceId: request.sourceId,
      toolId: request.toolId,
      action: rendered.action,
      resource: rendered.scope,
      decisionSource,
      createdAt: this.#isoNow(),
      epoch,
      ...(request.principal === undefined ? {} : { principal: request.principal }),
      ...(request.threadId === undefined ? {} : { threadId: request.threadId }),
      ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }),
    };
  }

  #isoNow(): string {
    return new Date(this.#clock.now()).toISOString();
  }
}
